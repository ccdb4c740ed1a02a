// `lbot skill validate DIR|ZIP|NAME`: layout and Agent Skills format checks without installing anything.
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { previewInstall, type InstallContext } from './install.js';
import type { LayoutIssue } from './layout.js';
import { checkPackageLayout } from './layout.js';
import { isValidSkillName } from './names.js';
import { readSkillPackage } from './package.js';
import { getSkill } from './store.js';

export type ValidatedSkill = {
  name: string;
  description: string;
  /** The folder checked: the installed package, or the package's folder inside the source. */
  location: string;
  ok: boolean;
  errors: LayoutIssue[];
  warnings: string[];
};

export type ValidationReport = { ok: boolean; skills: ValidatedSkill[] };

/**
 * Validates an installed skill (when `target` is a skill name and no such path exists) or every
 * package in a folder, zip or URL. `strict` also fails on warnings.
 */
export async function validateSkills(target: string, ctx: InstallContext, strict = false): Promise<ValidationReport> {
  const asPath = path.resolve(ctx.cwd ?? process.cwd(), target);
  const pathExists = (await stat(asPath).catch(() => null)) !== null;
  let skills: ValidatedSkill[];
  if (!pathExists && isValidSkillName(target) && !target.includes('/')) {
    const installed = await getSkill(ctx.dataDir, target);
    const pkg = await readSkillPackage(installed.package_root);
    const report = await checkPackageLayout(pkg, installed.name);
    skills = [
      {
        name: installed.name,
        description: installed.description,
        location: installed.package_root,
        ok: true,
        errors: report.errors,
        warnings: report.warnings,
      },
    ];
  } else {
    const preview = await previewInstall({ source: target }, ctx);
    skills = preview.skills.map((s) => ({
      name: s.name,
      description: s.description,
      location: s.source_path === '' ? preview.source : `${preview.source}:${s.source_path}`,
      ok: true,
      errors: s.errors,
      warnings: s.warnings,
    }));
  }
  for (const s of skills) s.ok = s.errors.length === 0 && (!strict || s.warnings.length === 0);
  return { ok: skills.every((s) => s.ok), skills };
}
