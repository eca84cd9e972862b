import { TRIM_TO, waterLevel } from '../store';

/** The names a group (a tenant) has marked, oldest first, the largest mark of those it has forgotten, and its newest. */
interface Group {
  readonly marks: Map<string, number>;
  forgotten: number;
  newest: number;
}

/** What a group holds towards the bound: its names, and one at least (a group touched holds none). */
const held = (of: Group): number => Math.max(1, of.marks.size);

/**
 * Marks of names (a resource written, a session ended) by one counter that only grows, kept per
 * group (tenant) and bounded over all groups: the memo cache compares a mark read before a read
 * ran with the mark after, to tell whether the name changed meanwhile. A name forgotten must never
 * read as unchanged, so each group keeps the largest mark it forgot, and {@link at} answers that
 * for a name it does not remember: a read begun before the name was forgotten is then not cached
 * (a miss, never a stale hit). Past `max` names a pass, rare (it frees a tenth of `max`), cuts the
 * groups holding more than an equal share to it, their oldest first (water-filling, as LiveSessions
 * does for sessions), so one tenant's flood of writes or session ends makes only its own forgotten.
 *
 * Each group keeps one name at least; with more groups than that, whole groups are dropped, the
 * least recently active first (marked, or {@link touch}ed when its tenant reads), into a floor: a
 * group not held answers it, and a group made again starts from it, so a group held never reads
 * another's drop. A tenant's running read thus misses only if its group was dropped meanwhile:
 * past nine tenths of `max` other tenants active since it began. Keeping every tenant's marks
 * instead would be unbounded; pinning a group while its reads run would need every read's end.
 */
export class MemoMarks {
  private readonly groups = new Map<string, Group>();
  private count = 0;
  /** What the groups hold towards `max` (see {@link held}). */
  private holding = 0;
  /** The group {@link take} made the most recently active last (it may have been dropped since). */
  private latest: string | undefined;
  /** Every mark below it may have been forgotten by a group not held (clear, or a whole group dropped). */
  private floor = 0;

  /**
   * `forgot`, if given, is told each name forgotten (cut from its group, or its group dropped
   * whole), as it goes: a bounded index (memo-legacy-names.ts) drops what it held for it. It must
   * not call back into these marks.
   */
  constructor(
    private readonly max: number,
    private readonly forgot?: (group: string, name: string) => void,
  ) {}

  /** The marks made so far (the last one). */
  get marks(): number {
    return this.count;
  }

  /** The names remembered, and the groups touched that remember none, over all groups. */
  get size(): number {
    return this.holding;
  }

  /** The mark of `name` in `group`: its last, or, forgotten or never marked, the largest forgotten there. */
  at(group: string, name: string): number {
    const of = this.groups.get(group);
    if (!of) return this.floor;
    return of.marks.get(name) ?? of.forgotten;
  }

  /** The largest mark `group` may have forgotten: a mark read before it may be of a name forgotten since. */
  forgotten(group: string): number {
    return this.groups.get(group)?.forgotten ?? this.floor;
  }

  /** The newest mark of `group` (the largest it may have forgotten, not held): it changes whenever a name of the group is marked. */
  newest(group: string): number {
    const of = this.groups.get(group);
    return of ? Math.max(of.newest, of.forgotten) : this.floor;
  }

  /** The last mark of `name` in `group` if remembered. */
  last(group: string, name: string): number | undefined {
    return this.groups.get(group)?.marks.get(name);
  }

  /** Makes `group` the most recently active (made, empty, if not held): the last to be dropped whole. */
  touch(group: string): void {
    this.take(group);
    if (this.holding > this.max) this.trim();
  }

  /** Marks `name` in `group` with the next mark, its group's newest; returns the mark. */
  mark(group: string, name: string): number {
    const of = this.take(group);
    this.holding -= held(of);
    of.marks.delete(name);
    of.marks.set(name, ++this.count);
    of.newest = this.count;
    this.holding += held(of);
    if (this.holding > this.max) this.trim();
    return this.count;
  }

  /** Forgets every name: every mark made so far counts as forgotten. */
  clear(): void {
    this.groups.clear();
    this.holding = 0;
    this.floor = this.count;
  }

  /**
   * Forgets every name, and counts one mark more as made and forgotten: as if every name of every
   * group were marked now, a mark read before differs from every mark read after.
   */
  markAll(): void {
    this.count++;
    this.clear();
  }

  /** `group`, made the most recently active: a whole group dropped is the least recently active. */
  private take(group: string): Group {
    let of = this.groups.get(group);
    // Already the most recently active (one tenant, or a tenant's reads in a row): moving it to
    // the end again would cost a delete and a set (~300 bytes) on every read.
    if (of && group === this.latest) return of;
    this.latest = group;
    if (of) this.groups.delete(group);
    else {
      // Made again after a drop: the floor covers what it forgot then.
      of = { marks: new Map(), forgotten: this.floor, newest: 0 };
      this.holding += held(of);
    }
    this.groups.set(group, of);
    return of;
  }

  /** Frees a tenth of `max`: the groups over an equal share are cut to it, oldest first (see the class). */
  private trim(): void {
    const target = Math.floor(this.max * TRIM_TO);
    const sizes = Float64Array.from(this.groups.values(), held);
    const level = Math.max(1, waterLevel(sizes, target));
    for (const [group, of] of this.groups) {
      if (of.marks.size <= level) continue;
      // One iterator: the oldest first, as they were marked.
      for (const [name, mark] of of.marks) {
        if (of.marks.size <= level) break;
        of.marks.delete(name);
        this.holding--;
        if (mark > of.forgotten) of.forgotten = mark;
        this.forgot?.(group, name);
      }
    }
    // More groups than one name each fits: the least recently active go whole, into the floor.
    for (const [group, of] of this.groups) {
      if (this.holding <= target) break;
      this.groups.delete(group);
      this.holding -= held(of);
      const last = Math.max(of.forgotten, of.newest);
      if (last > this.floor) this.floor = last;
      if (this.forgot) for (const name of of.marks.keys()) this.forgot(group, name);
    }
  }
}

/** The group of a memo resource name: its tenant (the name is tenant, NUL, then its value or hash), or '' for one without a NUL. */
export function resourceGroup(resource: string): string {
  const nul = resource.indexOf('\u0000');
  return nul < 0 ? '' : resource.slice(0, nul);
}
