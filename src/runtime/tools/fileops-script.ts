// The file tools' helper, run by node inside the box session: every path is resolved in the sandbox's own
// view of the filesystem and must stay under the workspace after symlinks are resolved.

/** Plain ESM JavaScript (no imports beyond node builtins); request on stdin, one JSON line on stdout. */
export const FILEOPS_SCRIPT = String.raw`
import fs from 'node:fs';
import path from 'node:path';
class Escape extends Error {}
const SKIP = new Set(['.git', 'node_modules', '__pycache__', '.venv', 'venv', '.tox', 'dist', 'build']);
const chunks = [];
for await (const c of process.stdin) chunks.push(c);
const req = JSON.parse(Buffer.concat(chunks).toString('utf8'));
const ROOT = fs.realpathSync(req.root);
const V = req.root;
const inside = (p) => p === ROOT || p.startsWith(ROOT + '/');
const virt = (real) => (real === ROOT ? V : V + real.slice(ROOT.length));
const guard = (vp, real) => {
  if (!inside(real)) throw new Escape('Path ' + vp + ' is outside the workspace: it resolves to ' + (real.startsWith('/') ? 'a location' : real) + ' outside ' + V + '.');
  return real;
};
const toReal = (vp) => ROOT + vp.slice(V.length);
const existing = (vp) => {
  try {
    return guard(vp, fs.realpathSync(toReal(vp)));
  } catch (e) {
    if (e instanceof Escape) throw e;
    if (e && (e.code === 'ENOENT' || e.code === 'ENOTDIR')) return null;
    throw e;
  }
};
const decoder = new TextDecoder('utf-8', { fatal: false });
function read() {
  const real = existing(req.path);
  if (real === null) return { ok: false, error: 'File not found: ' + req.path };
  const st = fs.statSync(real);
  if (st.isDirectory()) return { ok: true, content: fs.readdirSync(real).sort().join('\n'), is_directory: true };
  if (!st.isFile()) return { ok: false, error: 'Not a regular file: ' + req.path };
  if (st.size > 64 * 1024 * 1024) return { ok: false, error: 'File is larger than 64 MiB: ' + req.path };
  const fd = fs.openSync(real, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  let buf;
  try { buf = fs.readFileSync(fd); } finally { fs.closeSync(fd); }
  if (req.offset === null && req.limit === null && buf.length <= req.max_bytes) return { ok: true, content: decoder.decode(buf) };
  const lines = decoder.decode(buf).split('\n');
  const start = (req.offset ?? 1) - 1;
  const end = req.limit === null ? lines.length : Math.min(lines.length, start + req.limit);
  const out = [];
  let bytes = 0;
  let i = start;
  for (; i < end; i++) {
    const l = lines[i] + (i < lines.length - 1 ? '\n' : '');
    const n = Buffer.byteLength(l);
    if (bytes + n > req.max_bytes && out.length > 0) break;
    out.push(bytes + n > req.max_bytes ? l.slice(0, req.max_bytes) + '\n... [line truncated]\n' : l);
    bytes += n;
  }
  const more = i < lines.length && !(i === lines.length - 1 && lines[i] === '');
  return { ok: true, content: out.join(''), truncated: more, start_line: start + 1, end_line: i, next_offset: more ? i + 1 : null, total_lines: lines.length - (lines[lines.length - 1] === '' ? 1 : 0) };
}
function ensureDir(vdir) {
  let cur = ROOT;
  for (const part of vdir.slice(V.length).split('/').filter(Boolean)) {
    const next = cur + '/' + part;
    let st = null;
    try { st = fs.lstatSync(next); } catch (e) { if (e.code !== 'ENOENT') throw e; }
    if (st === null) { fs.mkdirSync(next); cur = next; }
    else if (st.isSymbolicLink()) cur = guard(vdir, fs.realpathSync(next));
    else if (st.isDirectory()) cur = next;
    else throw new Error('Not a directory: ' + virt(next));
    if (!fs.statSync(cur).isDirectory()) throw new Error('Not a directory: ' + virt(cur));
  }
  return cur;
}
function finalTarget(vp) {
  const dir = ensureDir(path.posix.dirname(vp));
  let fp = dir + '/' + path.posix.basename(vp);
  try {
    if (fs.lstatSync(fp).isSymbolicLink()) fp = guard(vp, fs.realpathSync(fp));
  } catch (e) {
    if (e instanceof Escape) throw e;
    if (e.code !== 'ENOENT') throw e;
  }
  return guard(vp, fp);
}
function writeTo(fp, content, append) {
  const flags = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW | (append ? fs.constants.O_APPEND : fs.constants.O_TRUNC);
  const fd = fs.openSync(fp, flags, 0o644);
  try { fs.writeSync(fd, content); } finally { fs.closeSync(fd); }
}
function write() {
  const fp = finalTarget(req.path);
  writeTo(fp, req.content, req.append);
  return { ok: true, path: req.path, bytes_written: Buffer.byteLength(req.content) };
}
function edit() {
  const real = existing(req.path);
  if (real === null) return { ok: false, error: 'File not found: ' + req.path };
  if (!fs.statSync(real).isFile()) return { ok: false, error: 'Not a regular file: ' + req.path };
  const text = fs.readFileSync(real, 'utf8');
  let count = 0;
  for (let at = text.indexOf(req.old_string); at !== -1; at = text.indexOf(req.old_string, at + req.old_string.length)) count++;
  if (count === 0) return { ok: false, error: 'old_string not found in file.' };
  if (count > 1) return { ok: false, error: 'old_string matches ' + count + ' locations; provide a more unique string.' };
  const at = text.indexOf(req.old_string);
  writeTo(real, text.slice(0, at) + req.new_string + text.slice(at + req.old_string.length), false);
  return { ok: true, path: req.path };
}
function walk(base, onEntry, limit) {
  const stack = [[base, '']];
  let seen = 0;
  while (stack.length > 0) {
    const [dir, prefix] = stack.pop();
    let ents;
    try { ents = fs.readdirSync(dir, { withFileTypes: true }); } catch { continue; }
    for (const e of ents) {
      if (SKIP.has(e.name)) continue;
      const rel = prefix ? prefix + '/' + e.name : e.name;
      if (++seen > limit) return;
      if (onEntry(dir + '/' + e.name, rel, e) === false) return;
      if (e.isDirectory()) stack.push([dir + '/' + e.name, rel]);
    }
  }
}
function glob() {
  const base = existing(req.path);
  if (base === null) return { ok: false, error: 'Path not found: ' + req.path };
  if (!fs.statSync(base).isDirectory()) return { ok: false, error: 'Path is not a directory: ' + req.path };
  const re = new RegExp(req.match);
  const hits = [];
  walk(base, (full, rel) => {
    if (re.test(rel)) {
      let m = 0;
      try { m = fs.lstatSync(full).mtimeMs; } catch {}
      hits.push([rel, m]);
    }
  }, 200000);
  hits.sort((a, b) => b[1] - a[1]);
  const vbase = req.path === V ? V : req.path;
  return { ok: true, matches: hits.slice(0, req.max).map(([rel]) => vbase + '/' + rel), total: hits.length, truncated: hits.length > req.max };
}
function grep() {
  const re = new RegExp(req.source, req.flags);
  const inc = new RegExp(req.include);
  const base = existing(req.path);
  if (base === null) return { ok: false, error: 'Path not found: ' + req.path };
  const files = [];
  if (fs.statSync(base).isFile()) files.push([base, req.path]);
  else walk(base, (full, rel, e) => {
    if (files.length >= req.max_files) return false;
    if (!inc.test(rel)) return;
    if (e.isFile()) files.push([full, req.path + '/' + rel]);
    else if (e.isSymbolicLink()) {
      try {
        const real = fs.realpathSync(full);
        if (inside(real) && fs.statSync(real).isFile()) files.push([real, req.path + '/' + rel]);
      } catch {}
    }
  }, 1000000);
  const matches = [];
  for (const [real, vp] of files) {
    let text;
    try {
      if (fs.statSync(real).size > 16 * 1024 * 1024) continue;
      text = decoder.decode(fs.readFileSync(real));
    } catch { continue; }
    const lines = text.split(/\r\n|\r|\n/);
    for (let i = 0; i < lines.length; i++) {
      if (re.test(lines[i])) {
        matches.push({ file: vp, line: i + 1, content: lines[i].replace(/\s+$/, '') });
        if (matches.length >= req.max_matches) break;
      }
      re.lastIndex = 0;
    }
    if (matches.length >= req.max_matches) break;
  }
  return { ok: true, matches, total: matches.length, truncated: matches.length >= req.max_matches };
}
const ops = { read, write, edit, glob, grep };
let result;
try {
  result = ops[req.op]();
} catch (e) {
  result = e instanceof Escape ? { ok: false, error: e.message, escape: true } : { ok: false, error: (e && e.message) || String(e) };
}
process.stdout.write(JSON.stringify(result) + '\n');
`;
