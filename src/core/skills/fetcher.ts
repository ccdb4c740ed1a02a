// The port core uses to get remote skill sources; runtime/skills implements it with git and fetch.

export type GitCloneRequest = {
  /** Remote URL, file:// URL or local repository path. */
  url: string;
  /** Branch, tag or commit; null = the remote's default branch. */
  ref: string | null;
  /** Directory to clone into; must not exist. */
  dest: string;
  /**
   * Size budget: the clone is stopped with `skill.too_large` (and `dest` removed) once `.git` holds
   * more than `maxGitBytes` or `dest` as a whole (checkout plus `.git`) more than `maxTotalBytes`.
   */
  maxGitBytes: number;
  maxTotalBytes: number;
  signal?: AbortSignal | undefined;
};

export type DownloadRequest = {
  url: string;
  /** File to write; must not exist. */
  dest: string;
  /** The download is aborted once more bytes than this arrive. */
  maxBytes: number;
  signal?: AbortSignal | undefined;
};

export interface SkillFetcher {
  /**
   * Clones `url` at `ref` into `dest` and resolves with the checked-out commit. A remote that cannot
   * be reached or a ref that does not exist fails with `skill.invalid_source`; one over the size
   * budget fails with `skill.too_large`. Git runs without the user's or the system's git config.
   */
  gitClone(req: GitCloneRequest): Promise<{ commit: string }>;
  /** Downloads a GitHub-hosted archive; fails with `skill.invalid_source` or `skill.too_large`. */
  download(req: DownloadRequest): Promise<void>;
}
