import type { Resource } from './resource-spec';

/** All declared resources, by event name and by path segment. */
export class Registry {
  readonly byName = new Map<string, Resource>();
  readonly byPath = new Map<string, Resource>();
  /** Retired path spelling → current path. */
  readonly retiredPaths = new Map<string, string>();

  constructor(resources: readonly Resource[]) {
    for (const r of resources) {
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
