/** The `orgscan` command's help texts and its plain-text tables. */
export const HELP: Record<string, string> = {
  '': `orgscan — Organization Scan Data Service

Usage: orgscan <command> [options]

Commands:
  serve [--port N] [--workers N]           start the service (embedded database unless DATABASE_URL is set)
  migrate                                  apply database migrations
  seed [--scale X]                         fill deterministic demo data (scale 1 = one large org with 20,000+ fields)
  import --account ID FILE                 import one scan bundle (JSON) for an org of the account
  docs [--out DIR]                         write the generated references (OpenAPI, REST, MCP, errors) and client types
  accounts create --name N [--daily-limit N --monthly-limit N]
  accounts list
  accounts update ID [--name N --daily-limit N --monthly-limit N --enhanced-mcp-security on|off --email-domain D]
  keys create --account ID [--name N]      create an API key; the secret is printed once
  keys list --account ID
  keys revoke KEYID
  users create --account ID --email E [--name N --admin --password-stdin]
                                           a user who signs in; prints a one-time password unless given on stdin
  users list --account ID | grant USER --org ORGID | revoke-org USER --org ORGID | revoke-tokens USER
  clients create --account ID --name N --redirect-uri U… --scope S… [--token-exchange]
                                           an OAuth client for the account; the secret is printed once
  clients list --account ID | update CLIENT [--name N --redirect-uri U… --scope S…] | revoke CLIENT

Every command accepts --json (machine-readable output; errors too, as JSON on stderr) and --help; orgscan --version. While a server runs on the embedded database,
accounts, keys, users, clients and import are carried out by that server; seed and migrate need it stopped.
Environment: DATABASE_URL, ORGSCAN_DATA_DIR (default ./data), PORT, ORGSCAN_PEPPER, … (see README).`,
  serve:
    'Usage: orgscan serve [--port N] [--workers N] [--json]\nStarts the service; seeds demo data on the first start of an empty embedded database.\n' +
    '--workers N (ORGSCAN_WORKERS; default 1): N processes sharing the port, restarted when they die (needs DATABASE_URL).',
  migrate: 'Usage: orgscan migrate [--json]\nApplies pending migrations.',
  seed: 'Usage: orgscan seed [--scale X] [--json]\nFills deterministic demo data (accounts, orgs, scans). --scale between 0 and 10, default 1.',
  docs: 'Usage: orgscan docs [--out DIR] [--json]\nWrites docs/openapi.json, docs/reference/{rest,mcp,errors}.md and client/generated.ts from the registry (default: into this installation).',
  import: 'Usage: orgscan import --account ID FILE [--json]\nImports one scan bundle ({org, scan, data}) in one transaction.',
  accounts:
    'Usage:\n  orgscan accounts create --name N [--daily-limit N] [--monthly-limit N] [--json]\n  orgscan accounts list [--json]\n' +
    '  orgscan accounts update ID [--name N] [--daily-limit N] [--monthly-limit N] [--enhanced-mcp-security on|off] [--email-domain D] [--json]\n' +
    'Enhanced MCP Security: only OAuth clients issued for the account (orgscan clients create) may use MCP; API keys may not.\n' +
    '--email-domain: users of the upstream identity provider with a verified e-mail in D join this account on first sign-in.',
  users:
    'Usage:\n  orgscan users create --account ID --email E [--name N] [--admin] [--password-stdin] [--json]\n  orgscan users list --account ID [--json]\n' +
    '  orgscan users grant USER --org ORGID [--json]\n  orgscan users revoke-org USER --org ORGID [--json]\n  orgscan users revoke-tokens USER [--json]\n' +
    'A user signs in (OAuth) and sees only the orgs granted to it. Without --password-stdin a one-time password is printed.',
  clients:
    'Usage:\n  orgscan clients create --account ID --name N --redirect-uri U [--redirect-uri U…] --scope mcp:read [--scope mcp:write] [--token-exchange] [--json]\n' +
    '  orgscan clients list --account ID [--json]\n  orgscan clients update CLIENT [--name N] [--redirect-uri U…] [--scope S…] [--json]\n  orgscan clients revoke CLIENT [--json]\n' +
    'A localhost or 127.0.0.1 redirect URI accepts any port. The client secret is printed once.',
  keys: 'Usage:\n  orgscan keys create --account ID [--name N] [--json]\n  orgscan keys list --account ID [--json]\n  orgscan keys revoke KEYID [--json]',
}

export function table(rows: Array<Record<string, unknown>>, cols: string[]): string {
  if (rows.length === 0) return '(none)'
  const cell = (v: unknown) => (v === null || v === undefined ? '-' : Array.isArray(v) ? v.join(',') : String(v))
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)))
  const line = (vals: string[]) => vals.map((v, i) => v.padEnd(widths[i])).join('  ').trimEnd()
  return [line(cols), ...rows.map((r) => line(cols.map((c) => cell(r[c]))))].join('\n')
}
