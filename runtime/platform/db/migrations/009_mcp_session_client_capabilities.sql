-- What a 2025-era MCP client declared at `initialize` that it answers (sampling, form-mode elicitation), kept with the
-- session so that any process serving one of its tool calls knows what it may ask (runtime/surfaces/mcp/client-requests.ts):
-- {"sampling": true, "elicitation": true}, either key present only when true. NULL: nothing (or a session opened
-- before this column).
ALTER TABLE mcp_sessions ADD COLUMN client_capabilities jsonb;
