/**
 * One lookup for concurrent requests of the same answer: the requests that need `key` while its lookup is under way
 * get that lookup's promise instead of starting another. The entry goes when the lookup settles, unless the caller
 * dropped it first (an invalidation: requests after it must not join a lookup that may have read before the change),
 * in which case the newer lookup stays.
 */
export function shared<V>(pending: Map<string, Promise<V>>, key: string, lookup: () => Promise<V>): Promise<V> {
  const under = pending.get(key)
  if (under) return under
  const p = lookup().finally(() => {
    if (pending.get(key) === p) pending.delete(key)
  })
  pending.set(key, p)
  return p
}
