// Install limits for skill packages (skills-mcp-tools.md §1.7), read from config `skills.install.*`.
import { z } from 'zod';
import { LbotError } from '../errors.js';
import { isRecord } from '../json.js';
import { firstIssue } from '../zod-issue.js';

const MiB = 1024 * 1024;

export const SkillLimitsSchema = z.strictObject({
  /** Largest archive file accepted (compressed bytes). */
  max_archive_bytes: z
    .number()
    .int()
    .positive()
    .default(50 * MiB),
  /** Total unpacked bytes of one package, counted while streaming. */
  max_uncompressed_bytes: z
    .number()
    .int()
    .positive()
    .default(200 * MiB),
  /** Files plus directories in one archive or package. */
  max_entries: z.number().int().positive().default(5_000),
  /** Largest single file, unpacked. */
  max_file_bytes: z
    .number()
    .int()
    .positive()
    .default(50 * MiB),
  /** Largest unpacked:compressed ratio, checked for entries above `ratio_min_bytes`. */
  max_compression_ratio: z.number().positive().default(200),
  ratio_min_bytes: z.number().int().nonnegative().default(MiB),
  /** Longest entry name in bytes. */
  max_name_bytes: z.number().int().positive().default(1_024),
});
export type SkillLimits = z.infer<typeof SkillLimitsSchema>;

export const DEFAULT_SKILL_LIMITS: SkillLimits = SkillLimitsSchema.parse({});

export const SkillsConfigSchema = z.looseObject({
  install: SkillLimitsSchema.prefault({}),
});
export type SkillsConfig = z.infer<typeof SkillsConfigSchema>;

/** Reads `skills.install.*` from the effective config (a loose section other modules do not own). */
export function skillLimitsFromConfig(config: Record<string, unknown>): SkillLimits {
  const section = config.skills;
  if (!isRecord(section)) return DEFAULT_SKILL_LIMITS;
  const parsed = SkillsConfigSchema.safeParse(section);
  if (parsed.success) return parsed.data.install;
  const issue = firstIssue(parsed.error, 'skills', ['skills']);
  throw new LbotError('config.invalid', `config ${issue.text}`, { details: { path: ['skills', ...issue.path].join('.') } });
}
