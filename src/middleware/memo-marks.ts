import { TRIM_TO, waterLevel } from '../store';

/** The names a group (a tenant) has marked, oldest first, and the largest mark of the names it has forgotten. */
interface Group {
  readonly marks: Map<string, number>;
  forgotten: number;
}

/**
 * Marks of names (a resource written, a session ended) by one counter that only grows, kept per
 * group (tenant) and bounded over all groups: the memo cache compares a mark read before a read
 * ran with the mark after, to tell whether the name changed meanwhile. A name forgotten must never
 * read as unchanged, so each group keeps the largest mark it forgot, and {@link at} answers that
 * for a name it does not remember: a read begun before the name was forgotten is then not cached
 * (a miss, never a stale hit). Past `max` names a pass, rare (it frees a tenth of `max`), cuts the
 * groups holding more than an equal share to it, their oldest first (water-filling, as LiveSessions
 * does for sessions), so one tenant's flood of writes or session ends makes only its own forgotten.
 * Each group keeps one name at least; only with more groups than that are whole groups dropped, the
 * least recently marked first, into a floor that counts for every group.
 */
export class MemoMarks {
  private readonly groups = new Map<string, Group>();
  private count = 0;
  private names = 0;
  /** Every mark below it may have been forgotten, in any group (clear, or a whole group dropped). */
  private floor = 0;

  constructor(private readonly max: number) {}

  /** The marks made so far (the last one). */
  get marks(): number {
    return this.count;
  }

  /** The names remembered, over all groups. */
  get size(): number {
    return this.names;
  }

  /** The mark of `name` in `group`: its last, or, forgotten or never marked, the largest forgotten there. */
  at(group: string, name: string): number {
    const of = this.groups.get(group);
    const mark = of?.marks.get(name);
    if (mark !== undefined) return mark;
    return Math.max(this.floor, of?.forgotten ?? 0);
  }

  /** The largest mark `group` may have forgotten: a mark read before it may be of a name forgotten since. */
  forgotten(group: string): number {
    return Math.max(this.floor, this.groups.get(group)?.forgotten ?? 0);
  }

  /** The last mark of `name` in `group` if remembered. */
  last(group: string, name: string): number | undefined {
    return this.groups.get(group)?.marks.get(name);
  }

  /** Marks `name` in `group` with the next mark, its group's newest; returns the mark. */
  mark(group: string, name: string): number {
    let of = this.groups.get(group);
    if (of) this.groups.delete(group);
    else of = { marks: new Map(), forgotten: 0 };
    // The group last marked last: a whole group dropped is the least recently marked.
    this.groups.set(group, of);
    if (of.marks.delete(name)) this.names--;
    of.marks.set(name, ++this.count);
    this.names++;
    if (this.names > this.max) this.trim();
    return this.count;
  }

  /** Forgets every name: every mark made so far counts as forgotten. */
  clear(): void {
    this.groups.clear();
    this.names = 0;
    this.floor = this.count;
  }

  /** Frees a tenth of `max`: the groups over an equal share are cut to it, oldest first (see the class). */
  private trim(): void {
    const target = Math.floor(this.max * TRIM_TO);
    const sizes = Float64Array.from(this.groups.values(), (of) => of.marks.size);
    const level = Math.max(1, waterLevel(sizes, target));
    for (const of of this.groups.values()) {
      if (of.marks.size <= level) continue;
      // One iterator: the oldest first, as they were marked.
      for (const [name, mark] of of.marks) {
        if (of.marks.size <= level) break;
        of.marks.delete(name);
        this.names--;
        if (mark > of.forgotten) of.forgotten = mark;
      }
    }
    // More groups than one name each fits: the least recently marked go whole, into the floor.
    for (const [group, of] of this.groups) {
      if (this.names <= target) break;
      this.groups.delete(group);
      this.names -= of.marks.size;
      // Its newest mark is its largest (marks grow, and a name marked again goes last).
      let last = of.forgotten;
      for (const mark of of.marks.values()) last = mark;
      if (last > this.floor) this.floor = last;
    }
  }
}

/** The group of a memo resource name: its tenant (the name is tenant, NUL, value), or '' for a hashed one. */
export function resourceGroup(resource: string): string {
  const nul = resource.indexOf('\u0000');
  return nul < 0 ? '' : resource.slice(0, nul);
}
