// A typed client for the pmapi v3 API: the types come from the OpenAPI document the server publishes at
// GET /api/v3/openapi.json (src/pmapi.d.ts, written by openapi-typescript: `pnpm generate`), the calls go
// through openapi-fetch. test/typed-client.test.ts runs every function here against the quickstart.

// #region client
import createClient, { type Client } from 'openapi-fetch';
import type { components, operations, paths } from './pmapi';

// Names for the generated types.
export type Project = components['schemas']['Project'];
export type Task = components['schemas']['Task'];
export type Problem = components['schemas']['Problem'];
export type PmapiClient = Client<paths>;
/** The JSON body an operation takes, by its operationId. */
export type Body<Op extends keyof operations> = NonNullable<operations[Op]['requestBody']> extends { content: { 'application/json': infer B } } ? B : never;
export type ProjectInput = Body<'createProject'>;
export type TaskInput = Body<'createTask'>;

/**
 * A client for the v3 API at `apiUrl` (the document's server is `/api/v3`, so e.g.
 * http://127.0.0.1:3000/api/v3), sending `token` (a personal access token or an OAuth access token).
 */
export function pmapiClient(apiUrl: string, token: string): PmapiClient {
  return createClient<paths>({ baseUrl: apiUrl.replace(/\/$/, ''), headers: { authorization: `Bearer ${token}` } });
}
// #endregion client

/** An answer that was a problem body: its status, code and detail (and `errors` for validation_failed). */
export class PmapiProblem extends Error {
  constructor(readonly problem: Problem) {
    super(`pmapi answered ${problem.status} ${problem.code}: ${problem.detail}`);
    this.name = 'PmapiProblem';
  }
}

/** The data of a success, or throws the problem (the document types every error status as a Problem). */
function ok<T>(r: { data?: T; error?: Problem }): T {
  if (r.error !== undefined) throw new PmapiProblem(r.error);
  return r.data as T;
}

/** The first page of the caller's projects, newest first. */
export async function listProjects(client: PmapiClient, limit = 50): Promise<Project[]> {
  const page = ok(await client.GET('/projects', { params: { query: { limit, sort: '-createdAt' } } }));
  return page.data;
}

// #region create
/**
 * Create a project; a replay with the same idempotency key gets the first answer back. The body is a parameter
 * of the generated type (or write `{ … } satisfies ProjectInput` inline): openapi-fetch's `body` alone lets an
 * unknown key through once the required ones are there.
 */
export async function createProject(client: PmapiClient, input: ProjectInput, idempotencyKey?: string): Promise<Project> {
  return ok(await client.POST('/projects', {
    body: input,
    ...(idempotencyKey ? { params: { header: { 'Idempotency-Key': idempotencyKey } } } : {}),
  }));
}

/** Create a task (in `input.projectId`, or the caller's personal tasks without one). */
export async function createTask(client: PmapiClient, input: TaskInput): Promise<Task> {
  return ok(await client.POST('/tasks', { body: input }));
}
// #endregion create

// #region list
/**
 * The open tasks of a project whose name contains `text`, each with its project record in place
 * (filters `projectId[eq]`, `completed[eq]`, `name[contains]`; `expand=project`).
 */
export async function openTasksWithProject(client: PmapiClient, projectId: string, text?: string): Promise<(Task & { project: Project })[]> {
  const page = ok(await client.GET('/tasks', {
    params: {
      query: {
        'projectId[eq]': projectId,
        'completed[eq]': false,
        ...(text ? { 'name[contains]': text } : {}),
        expand: 'project',
        sort: 'order',
      },
    },
  }));
  // expand=project puts the record under `project` (typed Project | null: null when gone or not visible).
  return page.data.map((t) => {
    if (!t.project) throw new Error(`task ${t.id} came without its expanded project`);
    return { ...t, project: t.project };
  });
}
// #endregion list

// #region problem
/** A project by id, or undefined when the caller can see none (a 404 problem). Other problems throw. */
export async function findProject(client: PmapiClient, id: string): Promise<Project | undefined> {
  const { data, error, response } = await client.GET('/projects/{id}', { params: { path: { id } } });
  if (error) {
    // error is the Problem body: status, code, detail, requestId, docsUrl (errors[] for validation_failed).
    if (response.status === 404 && error.code === 'resource_not_found') return undefined;
    throw new PmapiProblem(error);
  }
  return data;
}
// #endregion problem
