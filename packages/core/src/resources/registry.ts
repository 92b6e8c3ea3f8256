import type { Resource } from './resource-spec';

/** All declared resources, by event name and by path segment. */
export class Registry {
  readonly byName = new Map<string, Resource>();
  readonly byPath = new Map<string, Resource>();
  /** Retired path spelling → current path. */
  readonly retiredPaths = new Map<string, string>();

  /**
   * A resource named like an earlier one replaces it (a host's grown version of
   * a built-in). `reserved`: path segments the API serves itself (its own
   * pages, blob links, operation routes), which no resource may take; nor may
   * two resources share a path, current or retired: one would silently hide
   * the other.
   */
  constructor(resources: readonly Resource[], reserved: readonly string[] = []) {
    const last = new Map(resources.map((r) => [r.name, r]));
    const taken = new Map<string, string | undefined>(reserved.map((p) => [p, undefined]));
    for (const r of last.values()) {
      for (const path of [r.path, ...(r.retiredPaths ?? [])]) {
        if (taken.has(path)) {
          const owner = taken.get(path);
          throw new TypeError(`pmapi: resource '${r.name}' takes the path '${path}', which ${owner === undefined ? 'the API serves itself' : `resource '${owner}' has`}`);
        }
        taken.set(path, r.name);
      }
      this.byName.set(r.name, r);
      this.byPath.set(r.path, r);
      for (const old of r.retiredPaths ?? []) this.retiredPaths.set(old, r.path);
    }
  }

  get(name: string): Resource {
    const r = this.byName.get(name);
    if (!r) throw new Error(`pmapi: unknown resource '${name}'`);
    return r;
  }

  all(): Resource[] {
    return [...this.byName.values()];
  }

  /**
   * Resources whose actions are role permissions: all but personal ones
   * (`ownedBy`), which every member manages for themselves.
   */
  roleResources(): Resource[] {
    return this.all().filter((r) => !r.ownedBy);
  }
}
