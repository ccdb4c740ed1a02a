// Shapes of `lbot skill …`: installed skills, install outcomes, validation and verification reports.
import { z } from 'zod';
import { defineShape } from './shape.js';

const SkillSchema = z.strictObject({
  name: z.string(),
  display_name: z.string(),
  description: z.string(),
  version: z.string().nullable(),
  package_root: z.string(),
  entry_file: z.string().nullable(),
  created_at: z.string().nullable(),
  updated_at: z.string().nullable(),
  warnings: z.array(z.string()),
  invalid: z.boolean().describe('no entry file or a name lbot cannot use: never offered to runners'),
  source: z.string().nullable(),
  source_type: z.string().nullable(),
  sha256: z.string().nullable(),
  installed_at: z.string().nullable(),
});

export const Skill = defineShape('Skill', 'item', 'an installed skill (`skill list`)', SkillSchema);

export const SkillDetail = defineShape(
  'SkillDetail',
  'item',
  'one installed skill with its instructions, frontmatter, provenance history and files (`skill show`)',
  SkillSchema.extend({
    instructions: z.string(),
    frontmatter: z.record(z.string(), z.unknown()),
    allowed_tools: z.unknown(),
    history: z.array(z.unknown()),
    files: z.array(z.unknown()),
  }),
);

export const SkillFile = defineShape(
  'SkillFile',
  'item',
  'one file of an installed skill (`skill read`)',
  z.strictObject({ skill: z.looseObject({ name: z.string() }), path: z.string(), content: z.string() }),
);

export const SkillInstall = defineShape(
  'SkillInstall',
  'item',
  'what `skill install` installed (or, with --dry-run, would install; with --frozen, checked against the lock)',
  z.looseObject({ skills: z.array(z.looseObject({ name: z.string() })) }),
);

export const SkillCreated = defineShape(
  'SkillCreated',
  'item',
  'the package `skill new` wrote, and what was installed from it',
  z.strictObject({ name: z.string(), path: z.string(), files: z.array(z.string()), installed: z.array(z.looseObject({ name: z.string() })) }),
);

export const SkillReport = defineShape(
  'SkillReport',
  'item',
  'the report of `skill validate` / `skill verify`; `ok` is false when a skill failed',
  z.strictObject({ ok: z.boolean(), skills: z.array(z.looseObject({ name: z.string() })) }),
);
