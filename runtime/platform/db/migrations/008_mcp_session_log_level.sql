-- The log level a 2025-era MCP session asked for with `logging/setLevel` (runtime/surfaces/mcp/logging.ts): kept with the
-- session, so every process serving it sends the same `notifications/message`. NULL: never set, no log messages.
ALTER TABLE mcp_sessions ADD COLUMN log_level text
  CHECK (log_level IN ('debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'));
