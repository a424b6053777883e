/** Whether a parsed JSON value is an object (not an array, not null): the shape every JSON message and bundle starts as. */
export const isJsonObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
