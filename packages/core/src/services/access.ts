import { notFound, ProblemError } from '../errors/problem';
import type { Rec, Resource } from '../resources/define-resource';
import { LINKS } from '../sql/repo';
import { countLiveProjects, openLiveProjectIds, openProjectIdsAmong } from '../sql/queries/projects';
import type { ProjectAccessView, ReadContext } from './context';

/** Most projects a workspace-wide list may span (spec "Limits"). */
export const ACCESSIBLE_PROJECTS_MAX = 1000;

/** The fields of a record that {@link ProjectAccess.assertRecord} reads (a read that needs nothing else selects only these). */
export function accessFields(res: Resource): string[] {
  const out = ['id'];
  if (res.ownedBy) out.push(res.ownedBy);
  if (res.ownerRead) out.push(res.ownerRead.field);
  if (res.privateTo) out.push(res.privateTo.field, res.privateTo.owner);
  if (res.membersOnly?.field) out.push(res.membersOnly.field);
  if (res.projectContainer) out.push('ownerId', 'accessType');
  else if (res.projectField) out.push(res.projectField);
  return out;
}

/**
 * Who may open which project (spec: project_access_denied,
 * accessible_project_ids_exceeded; rules in docs/not-shown.md):
 * - holders of `viewAllProjects` (owner and manager) open every project;
 * - everyone opens projects they own or are a member of;
 * - non-guests also open `public` and `workspace` projects; guests (the
 *   client role) only open projects they belong to.
 */
export class ProjectAccess implements ProjectAccessView {
  private readonly memo = new Map<string, boolean>();
  private ids?: Promise<string[] | 'all'>;

  constructor(private readonly ctx: ReadContext) {}

  get seesAll(): boolean {
    return this.ctx.principal.permissions.has('viewAllProjects');
  }

  private get guest(): boolean {
    return this.ctx.principal.role === 'client';
  }

  /** May the caller open this project (a project record)? */
  async canOpen(project: Rec): Promise<boolean> {
    if (this.seesAll) return true;
    const known = this.memo.get(project.id);
    if (known !== undefined) return known;
    const me = this.ctx.principal.memberId;
    let ok = project.ownerId === me || (!this.guest && (project.accessType === 'public' || project.accessType === 'workspace'));
    if (!ok) {
      // A project read with its links carries its members already.
      const carried = (project[LINKS] as Record<string, string[]> | undefined)?.['project.members'];
      const members = carried ?? (await this.ctx.repo.linksOf('project.members', [project.id])).get(project.id) ?? [];
      ok = members.includes(me);
    }
    this.memo.set(project.id, ok);
    return ok;
  }

  /** Of these project ids, the ones the caller may open (one query per 500 ids). */
  async filterOpen(projectIds: readonly string[]): Promise<Set<string>> {
    const ids = [...new Set(projectIds)];
    if (this.seesAll) return new Set(ids);
    const out = new Set<string>();
    const me = this.ctx.principal.memberId;
    const open = this.guest ? [] : ['public', 'workspace'];
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500);
      // The SQL form of canOpen (sql/queries/projects.ts): owned, open to non-guests, or a member.
      for (const id of await openProjectIdsAmong(this.ctx.repo, this.ctx.teamId, chunk, me, open)) out.add(id);
    }
    return out;
  }

  /**
   * Is this a private record (`privateTo`) of another member, or another
   * member's row (`ownerRead`) the caller's role does not widen reads to?
   * Such a record is answered and expanded like a missing one.
   */
  private hidden(res: Resource, rec: Rec): boolean {
    const me = this.ctx.principal.memberId;
    const o = res.ownerRead;
    if (o && rec[o.field] !== me && !this.ctx.principal.permissions.has(o.widenedBy)) return true;
    const p = res.privateTo;
    return !!p && rec[p.field] === p.value && rec[p.owner] !== me;
  }

  /** The row whose members decide on a record (`membersOnly`): the record itself, the row its field names, or none. */
  private membershipRow(res: Resource, rec: Rec): string | undefined {
    const m = res.membersOnly;
    if (!m) return undefined;
    if (!m.field) return rec.id;
    return typeof rec[m.field] === 'string' ? (rec[m.field] as string) : undefined;
  }

  /** Of these rows (chats), the ones the caller is a member of (through links of `kind`). */
  async memberOf(kind: string, rowIds: readonly string[]): Promise<Set<string>> {
    const ids = [...new Set(rowIds)];
    if (ids.length === 0) return new Set();
    return this.ctx.repo.linkedTo(kind, ids, this.ctx.principal.memberId);
  }

  /** Keep only the records (of a project, or of rows of projects) the caller may open. */
  async filterRecords(res: Resource, recs: Rec[]): Promise<Rec[]> {
    if (res.privateTo || res.ownerRead) recs = recs.filter((r) => !this.hidden(res, r));
    if (res.membersOnly && recs.length) {
      const rows = recs.map((r) => this.membershipRow(res, r));
      const mine = await this.memberOf(res.membersOnly.links, rows.filter((x): x is string => x !== undefined));
      recs = recs.filter((_, i) => rows[i] === undefined || mine.has(rows[i]!));
    }
    if (this.seesAll || recs.length === 0) return recs;
    const field = res.projectKey;
    if (!field) return recs;
    const open = await this.filterOpen(recs.map((r) => r[field]).filter((v): v is string => typeof v === 'string'));
    return recs.filter((r) => typeof r[field] !== 'string' || open.has(r[field] as string));
  }

  /** Fail with 403 project_access_denied unless the caller may open the project with this id (trashed ones count). */
  async assertProject(projectId: string): Promise<void> {
    if (this.seesAll) return;
    const projects = this.ctx.registry.get('project');
    const p = await this.ctx.repo.get(projects, this.ctx.teamId, projectId, { includeTrashed: true });
    if (p && !(await this.canOpen(p))) {
      throw new ProblemError('project_access_denied', `You have no access to project ${projectId}`, { projectId });
    }
  }

  /** The check for a record of any resource: a project itself, or a row of a project. */
  async assertRecord(res: Resource, rec: Rec): Promise<void> {
    // Another member's personal record is answered like an unknown id.
    if (res.ownedBy && rec[res.ownedBy] !== this.ctx.principal.memberId) throw notFound(res.name, rec.id);
    if (this.hidden(res, rec)) throw notFound(res.name, rec.id);
    const row = this.membershipRow(res, rec);
    if (row !== undefined && !(await this.memberOf(res.membersOnly!.links, [row])).has(row)) throw notFound(res.name, rec.id);
    if (res.projectContainer) {
      if (!(await this.canOpen(rec))) throw new ProblemError('project_access_denied', `You have no access to project ${rec.id}`, { projectId: rec.id });
    } else if (res.projectField && typeof rec[res.projectField] === 'string') {
      await this.assertProject(rec[res.projectField] as string);
    }
  }

  /**
   * Ids of the projects the caller may open, for workspace-wide lists; 'all'
   * for callers who see everything. Over 1000: 400 accessible_project_ids_exceeded.
   */
  accessibleIds(): Promise<string[] | 'all'> {
    this.ids ??= this.load();
    return this.ids;
  }

  private async load(): Promise<string[] | 'all'> {
    const limit = ACCESSIBLE_PROJECTS_MAX + 1;
    const exceeded = (n: number) =>
      new ProblemError('accessible_project_ids_exceeded', `You can open more than ${ACCESSIBLE_PROJECTS_MAX} projects; restrict the list with projectId`, {
        max: ACCESSIBLE_PROJECTS_MAX, accessible: n,
      });
    if (this.seesAll) {
      const n = await countLiveProjects(this.ctx.repo, this.ctx.teamId);
      if (n > ACCESSIBLE_PROJECTS_MAX) throw exceeded(n);
      return 'all';
    }
    const me = this.ctx.principal.memberId;
    const open = this.guest ? [] : ['public', 'workspace'];
    const ids = await openLiveProjectIds(this.ctx.repo, this.ctx.teamId, me, open, limit);
    if (ids.length > ACCESSIBLE_PROJECTS_MAX) throw exceeded(ids.length);
    return ids;
  }
}
