import type { ConsentPage, ConsentView } from '@pmapi/core';
import type { Request } from 'express';

export function escape(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** The host's branding, fetched asynchronously (in a real app: a settings table, a CMS, a template file). */
async function brand(): Promise<{ product: string; support: string }> {
  await new Promise((r) => setImmediate(r));
  return { product: 'Acme Projects', support: 'help@acme.invalid' };
}

/**
 * The branded consent page: async, with the host's stylesheet, and a CSP
 * that admits it (`style-src 'self'`). pmapi keeps `no-store` and adds
 * `frame-ancestors 'none'`; the CSRF token travels in `view.fields`.
 * `form-action` names the app's origin too, since the form's answer is a
 * redirect there. A person with several workspaces picks one (`workspace`).
 */
export async function renderConsent(view: ConsentView, host: Request): Promise<ConsentPage> {
  const b = await brand();
  const e = escape;
  const hidden = Object.entries(view.fields).map(([k, v]) => `<input type="hidden" name="${e(k)}" value="${e(v)}">`).join('\n    ');
  const choice = view.workspaces.length < 2 ? `<p>Workspace: <strong>${e(view.workspace.name)}</strong></p>` : `<fieldset>
      <legend>Which workspace may ${e(view.client.name)} use?</legend>
      ${view.workspaces.map((w) => `<label><input type="radio" name="workspace" value="${e(w.id)}"${w.id === view.workspace.id ? ' checked' : ''}> ${e(w.name)} <small>(${e(w.scopeDescriptions.join('; '))})</small></label>`).join('<br>\n      ')}
    </fieldset>`;
  let appOrigin = '';
  try {
    appOrigin = new URL(view.redirectUri).origin;
  } catch { /* a custom-scheme redirect: no origin to name */ }
  const body = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>${e(b.product)}: connect ${e(view.client.name)}</title>
  <link rel="stylesheet" href="/static/app.css">
</head>
<body>
  <header class="brand">${e(b.product)}</header>
  <main aria-labelledby="t">
  <h1 id="t">Connect <strong>${e(view.client.name)}</strong>?</h1>
  <p>Signed in as ${e(host.session?.displayName ?? view.member.name)}.</p>
  <form method="post" action="${e(view.formAction)}">
    ${hidden}
    ${choice}
    <ul>${view.scopeDescriptions.map((d) => `<li>${e(d)}</li>`).join('')}</ul>
    <button type="submit" name="decision" value="allow">Allow</button>
    <button type="submit" name="decision" value="deny">Deny</button>
  </form>
  <p>Questions? ${e(b.support)}</p>
  </main>
</body>
</html>
`;
  return {
    body,
    headers: {
      'content-security-policy': `default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'${appOrigin && appOrigin !== 'null' ? ` ${appOrigin}` : ''}; base-uri 'none'`,
    },
  };
}
