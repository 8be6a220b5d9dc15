// What a V8 heap snapshot (.heapsnapshot, v8.writeHeapSnapshot) holds, by constructor: the
// shallow size and count of the objects of each constructor name, grouped as DevTools'
// "Summary" groups them ((string), (compiled code), (closure), (array), (system), …).
// Retained sizes would need the dominator tree; shallow sizes already say what fills the heap.
//
// The file is read line by line, never as one string: an operator's snapshot is hundreds of MB,
// past V8's string limit. V8 writes the meta object on the first line, every node and edge on a
// line of its own and every string on a line of its own, after a `"<section>":[` marker line.
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';

export interface ConstructorShare {
  name: string;
  count: number;
  shallowBytes: number;
}

export interface LargeObject {
  /** The node's V8 type: string, array, code, object, … */
  type: string;
  /** Its name: the constructor for objects, the text (its start) for strings. */
  name: string;
  shallowBytes: number;
}

export interface HeapSnapshotSummary {
  nodes: number;
  /** Σ shallow sizes of all nodes (about the heap used at the snapshot, after its full GC). */
  shallowBytes: number;
  /** Largest first. */
  constructors: ConstructorShare[];
  /** The largest single objects, largest first: big strings say which data is held whole. */
  largest: LargeObject[];
}

const largestKept = 15;

interface Meta {
  node_fields: string[];
  node_types: [string[], ...unknown[]];
}

/** The DevTools group of a node: its constructor name for objects, a parenthesised kind otherwise. */
function groupOf(type: string): string | undefined {
  switch (type) {
    case 'object':
    case 'native':
      return undefined; // named by the node's name
    case 'string':
    case 'concatenated string':
    case 'sliced string':
      return '(string)';
    case 'code': return '(compiled code)';
    case 'closure': return '(closure)';
    case 'array': return '(array)';
    case 'hidden':
    case 'object shape':
      return '(system)';
    case 'regexp': return 'RegExp';
    default: return `(${type})`;
  }
}

/** Feed it the snapshot's lines in order, then `finish()`. */
export class HeapSnapshotSummarizer {
  private section: 'meta' | 'nodes' | 'skip' | 'strings' = 'meta';
  private meta: Meta | undefined;
  private fieldCount = 0;
  private typeField = 0;
  private nameField = 0;
  private sizeField = 0;
  private readonly current: number[] = [];
  private nodes = 0;
  private shallowBytes = 0;
  /** By group name, or by the node's name index for objects (resolved once strings are read). */
  private readonly byGroup = new Map<string, { count: number; bytes: number }>();
  private readonly byNameIndex = new Map<number, { count: number; bytes: number }>();
  private readonly largest: Array<{ type: string; nameIndex: number; size: number }> = [];
  private readonly names = new Map<number, string>();
  private wantedNames: Set<number> | undefined;
  private stringIndex = 0;

  line(text: string): void {
    if (this.section === 'meta') {
      if (!text.startsWith('{"snapshot":')) throw new Error('not a V8 heap snapshot (no "snapshot" meta on the first line)');
      const parsed = JSON.parse(`${text.slice('{"snapshot":'.length).replace(/,\s*$/, '')}`) as { meta: Meta };
      this.meta = parsed.meta;
      this.fieldCount = this.meta.node_fields.length;
      this.typeField = this.meta.node_fields.indexOf('type');
      this.nameField = this.meta.node_fields.indexOf('name');
      this.sizeField = this.meta.node_fields.indexOf('self_size');
      if (this.typeField < 0 || this.nameField < 0 || this.sizeField < 0) throw new Error(`unexpected node fields: ${this.meta.node_fields.join(',')}`);
      this.section = 'skip';
      return;
    }
    const marker = /^"([a-z_]+)":\[/.exec(text);
    if (marker) {
      this.section = marker[1] === 'nodes' ? 'nodes' : marker[1] === 'strings' ? 'strings' : 'skip';
      text = text.slice(marker[0].length);
    }
    if (this.section === 'nodes') this.nodeNumbers(text);
    else if (this.section === 'strings') this.stringLine(text);
  }

  private nodeNumbers(text: string): void {
    for (const token of text.split(',')) {
      const t = token.trim().replace(/\]$/, '');
      if (t === '') continue;
      this.current.push(Number(t));
      if (this.current.length === this.fieldCount) {
        this.node(this.current);
        this.current.length = 0;
      }
    }
  }

  private node(fields: readonly number[]): void {
    const type = this.meta!.node_types[0][fields[this.typeField]!] ?? 'unknown';
    const size = fields[this.sizeField]!;
    this.nodes++;
    this.shallowBytes += size;
    const group = groupOf(type);
    const bucket = group === undefined
      ? this.byNameIndex.get(fields[this.nameField]!) ?? this.byNameIndex.set(fields[this.nameField]!, { count: 0, bytes: 0 }).get(fields[this.nameField]!)!
      : this.byGroup.get(group) ?? this.byGroup.set(group, { count: 0, bytes: 0 }).get(group)!;
    bucket.count++;
    bucket.bytes += size;
    if (this.largest.length < largestKept || size > this.largest.at(-1)!.size) {
      this.largest.push({ type, nameIndex: fields[this.nameField]!, size });
      this.largest.sort((a, b) => b.size - a.size);
      if (this.largest.length > largestKept) this.largest.pop();
    }
  }

  private stringLine(text: string): void {
    const literal = text.replace(/(,|\]\})\s*$/, '');
    if (literal === '') return;
    const index = this.stringIndex++;
    // Strings come after every node: the names wanted are known by now.
    this.wantedNames ??= new Set([...this.byNameIndex.keys(), ...this.largest.map((l) => l.nameIndex)]);
    if (!this.wantedNames.has(index)) return;
    try {
      this.names.set(index, JSON.parse(literal) as string);
    } catch {
      this.names.set(index, `(string #${index})`);
    }
  }

  finish(): HeapSnapshotSummary {
    if (!this.meta) throw new Error('empty heap snapshot');
    const totals = new Map(this.byGroup);
    for (const [index, share] of this.byNameIndex) {
      // Objects of one constructor name share one name string; "Object" etc. may also come from
      // several name strings with the same text: merge by text.
      const name = this.names.get(index) ?? `(string #${index})`;
      const t = totals.get(name) ?? { count: 0, bytes: 0 };
      totals.set(name, { count: t.count + share.count, bytes: t.bytes + share.bytes });
    }
    const constructors = [...totals.entries()]
      .map(([name, t]) => ({ name, count: t.count, shallowBytes: t.bytes }))
      .sort((a, b) => b.shallowBytes - a.shallowBytes);
    const largest = this.largest.map((l) => ({ type: l.type, name: this.names.get(l.nameIndex) ?? `(string #${l.nameIndex})`, shallowBytes: l.size }));
    return { nodes: this.nodes, shallowBytes: this.shallowBytes, constructors, largest };
  }
}

export async function summarizeHeapSnapshotFile(file: string): Promise<HeapSnapshotSummary> {
  const summarizer = new HeapSnapshotSummarizer();
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY })) summarizer.line(line);
  return summarizer.finish();
}

export function heapSnapshotMarkdown(summary: HeapSnapshotSummary, top = 30): string {
  const mb = (b: number) => (b / (1024 * 1024)).toFixed(2);
  const esc = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ').slice(0, 120);
  return [
    `Heap snapshot: ${summary.nodes} objects, ${mb(summary.shallowBytes)} MB shallow in all (after the full GC the snapshot makes).`,
    '',
    `Top ${top} constructors by shallow size:`,
    '',
    '| constructor | objects | shallow MB | % |',
    '|---|---:|---:|---:|',
    ...summary.constructors.slice(0, top).map((c) => `| ${esc(c.name)} | ${c.count} | ${mb(c.shallowBytes)} | ${((100 * c.shallowBytes) / (summary.shallowBytes || 1)).toFixed(1)} |`),
    '',
    `The ${summary.largest.length} largest single objects (a string's name is its text):`,
    '',
    '| type | name | shallow MB |',
    '|---|---|---:|',
    ...summary.largest.map((l) => `| ${l.type} | ${esc(JSON.stringify(l.name).slice(1, -1))} | ${mb(l.shallowBytes)} |`),
    '',
  ].join('\n');
}

/** "(string) 30.1 MB, Object 12.0 MB, …" — the first `top` constructors. */
export function heapSnapshotHeadline(summary: HeapSnapshotSummary, top = 6): string {
  return summary.constructors.slice(0, top).map((c) => `${c.name} ${(c.shallowBytes / (1024 * 1024)).toFixed(1)} MB (${c.count})`).join(', ');
}
