// The emulator's read access to a repository's real git data: ONE long-running
// `git cat-file --batch-command` per repository (git ≥ 2.36), asked `info <object>` and
// `contents <object>` over its stdin. Requests are written as they come and answered in
// order, so a repository's reads are serialised without a lock and no process is forked per
// request (the emulator shares the machine with the operator under test). It sees objects and
// refs written after it started (loose, packed or repacked). Immutable answers (objects by
// full id) are kept in a bounded memo; names that can move (branches) are always asked.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

export type GitObjectType = 'blob' | 'tree' | 'commit' | 'tag';

export interface GitObjectInfo {
  oid: string;
  type: GitObjectType;
  size: number;
}

export interface GitObject extends GitObjectInfo {
  data: Buffer;
}

export interface GitTreeItem {
  /** `100644`, `100755`, `120000` (symlink), `40000` (tree), `160000` (submodule). */
  mode: string;
  name: string;
  oid: string;
}

export interface GitIdentity {
  name: string;
  email: string;
  /** ISO 8601 with the author's offset, as GitHub shows it. */
  date: string;
}

export interface GitCommit {
  tree: string;
  parents: string[];
  author: GitIdentity;
  committer: GitIdentity;
  message: string;
}

interface Pending {
  command: 'info' | 'contents';
  resolve: (value: GitObject | GitObjectInfo | undefined) => void;
  reject: (err: Error) => void;
}

const fullId = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;
const header = /^([0-9a-f]{40,64}) (blob|tree|commit|tag) (\d+)$/;
const memoLimit = 20_000;

export class GitObjectReader {
  private child: ChildProcessWithoutNullStreams | undefined;
  private readonly pending: Pending[] = [];
  private buffer: Buffer = Buffer.alloc(0);
  /** Answers about full object ids (immutable), oldest first. */
  private readonly infos = new Map<string, GitObjectInfo>();
  private readonly objects = new Map<string, GitObject>();
  private closed = false;

  constructor(readonly gitDir: string) {}

  /** Type and size of `name` (any revision expression git accepts), or undefined when it does not resolve. */
  async info(name: string): Promise<GitObjectInfo | undefined> {
    const kept = fullId.test(name) ? (this.infos.get(name) ?? this.objects.get(name)) : undefined;
    if (kept) return { oid: kept.oid, type: kept.type, size: kept.size };
    const info = (await this.ask('info', name)) as GitObjectInfo | undefined;
    if (info && fullId.test(name)) keep(this.infos, name, info);
    return info;
  }

  /** The object `name` resolves to, with its content, or undefined. */
  async read(name: string): Promise<GitObject | undefined> {
    const kept = fullId.test(name) ? this.objects.get(name) : undefined;
    if (kept) return kept;
    const object = (await this.ask('contents', name)) as GitObject | undefined;
    // Blobs are read for one answer only; trees and commits are read again and again.
    if (object && object.type !== 'blob') keep(this.objects, object.oid, object);
    return object;
  }

  /** The entries of a tree object, in git's order. */
  async tree(oid: string): Promise<GitTreeItem[] | undefined> {
    const object = await this.read(oid);
    return object?.type === 'tree' ? parseTree(object.data, oid.length / 2) : undefined;
  }

  /** A commit object, parsed. */
  async commit(oid: string): Promise<GitCommit | undefined> {
    const object = await this.read(oid);
    return object?.type === 'commit' ? parseCommit(object.data) : undefined;
  }

  /** Stops git for good: later reads are refused. */
  async close(): Promise<void> {
    this.closed = true;
    const child = this.child;
    this.child = undefined;
    if (!child) return;
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    child.stdin.end();
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
    if (child.exitCode === null) child.kill('SIGKILL');
  }

  private ask(command: Pending['command'], name: string): Promise<GitObject | GitObjectInfo | undefined> {
    // One command per line: a name with a line break would be two commands.
    if (/[\n\r\0]/.test(name)) return Promise.resolve(undefined);
    if (this.closed) return Promise.reject(new Error(`the git reader of ${this.gitDir} is closed`));
    const child = this.child ?? this.start();
    return new Promise((resolve, reject) => {
      this.pending.push({ command, resolve, reject });
      child.stdin.write(`${command} ${name}\n`);
    });
  }

  private start(): ChildProcessWithoutNullStreams {
    const child = spawn('git', ['--git-dir', this.gitDir, 'cat-file', '--batch-command'], {
      env: { PATH: process.env.PATH, HOME: this.gitDir, LC_ALL: 'C', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child = child;
    this.buffer = Buffer.alloc(0);
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
      this.drain();
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr = `${stderr}${chunk.toString('utf8')}`.slice(-2000)));
    // A write to a git that already exited fails here; its exit rejects what is pending.
    child.stdin.on('error', () => {});
    const fail = (why: string) => {
      if (this.child === child) this.child = undefined;
      const waiting = this.pending.splice(0);
      for (const p of waiting) p.reject(new Error(`git cat-file in ${this.gitDir} ${why}${stderr ? `: ${stderr.trim()}` : ''}`));
    };
    child.on('error', (err) => fail(`could not run (${err.message})`));
    child.on('close', (code, signal) => fail(`exited (${signal ?? code})`));
    return child;
  }

  /** Answers every pending request whose whole answer has arrived. */
  private drain(): void {
    while (this.pending.length > 0) {
      const newline = this.buffer.indexOf(0x0a);
      if (newline < 0) return;
      const line = this.buffer.subarray(0, newline).toString('utf8');
      const m = header.exec(line);
      if (!m) {
        // `<name> missing` or `<name> ambiguous`.
        this.buffer = this.buffer.subarray(newline + 1);
        this.pending.shift()!.resolve(undefined);
        continue;
      }
      const info: GitObjectInfo = { oid: m[1]!, type: m[2] as GitObjectType, size: Number(m[3]) };
      const request = this.pending[0]!;
      if (request.command === 'info') {
        this.buffer = this.buffer.subarray(newline + 1);
        this.pending.shift();
        request.resolve(info);
        continue;
      }
      // The content, then a line feed.
      const end = newline + 1 + info.size;
      if (this.buffer.length < end + 1) return;
      const data = Buffer.from(this.buffer.subarray(newline + 1, end));
      this.buffer = this.buffer.subarray(end + 1);
      this.pending.shift();
      request.resolve({ ...info, data });
    }
  }
}

function keep<V>(memo: Map<string, V>, key: string, value: V): void {
  if (memo.size >= memoLimit) memo.delete(memo.keys().next().value!);
  memo.set(key, value);
}

/** `<mode> <name>\0<id bytes>` repeated. */
function parseTree(data: Buffer, idBytes: number): GitTreeItem[] {
  const items: GitTreeItem[] = [];
  let at = 0;
  while (at < data.length) {
    const space = data.indexOf(0x20, at);
    const nul = data.indexOf(0x00, space);
    if (space < 0 || nul < 0 || nul + 1 + idBytes > data.length) throw new Error('a malformed tree object');
    items.push({
      mode: data.subarray(at, space).toString('latin1'),
      name: data.subarray(space + 1, nul).toString('utf8'),
      oid: data.subarray(nul + 1, nul + 1 + idBytes).toString('hex'),
    });
    at = nul + 1 + idBytes;
  }
  return items;
}

/** Headers (`tree`, `parent`, `author`, `committer`, …), a blank line, the message. */
function parseCommit(data: Buffer): GitCommit {
  const text = data.toString('utf8');
  const split = text.indexOf('\n\n');
  const headers = (split < 0 ? text : text.slice(0, split)).split('\n');
  const message = split < 0 ? '' : text.slice(split + 2);
  let tree = '';
  const parents: string[] = [];
  let author: GitIdentity | undefined;
  let committer: GitIdentity | undefined;
  for (const line of headers) {
    const space = line.indexOf(' ');
    const key = line.slice(0, space);
    const value = line.slice(space + 1);
    if (key === 'tree') tree = value;
    else if (key === 'parent') parents.push(value);
    else if (key === 'author') author = parseIdentity(value);
    else if (key === 'committer') committer = parseIdentity(value);
  }
  if (!tree || !author || !committer) throw new Error('a malformed commit object');
  return { tree, parents, author, committer, message };
}

/** `Name <email> 1700000001 +0200` */
function parseIdentity(value: string): GitIdentity {
  const m = /^(.*) <([^>]*)> (\d+) ([+-])(\d\d)(\d\d)$/.exec(value);
  if (!m) throw new Error(`a malformed identity in a commit: ${value}`);
  const [, name, email, seconds, sign, hours, minutes] = m as unknown as [string, string, string, string, string, string, string];
  const offsetMinutes = (sign === '-' ? -1 : 1) * (Number(hours) * 60 + Number(minutes));
  const local = new Date(Number(seconds) * 1000 + offsetMinutes * 60_000).toISOString().replace(/\.\d{3}Z$/, '');
  return { name, email, date: offsetMinutes === 0 ? `${local}Z` : `${local}${sign}${hours}:${minutes}` };
}
