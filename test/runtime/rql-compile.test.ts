import { t } from '../helpers/file-test.ts'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import * as v from 'valibot'
import { ApiError } from '../../runtime/core/errors.ts'
import { f, sqlExpr } from '../../runtime/core/fields.ts'
import { compileFilter, likePattern, parseRql } from '../../runtime/core/rql/index.ts'
import { HASHED_LIST_FROM } from '../../runtime/core/rql/compile.ts'
import { openDatabase } from '../../runtime/platform/db/connect.ts'
import { createTestDatabase } from '../helpers/test-db.ts'

const fields = {
  id: f.int(),
  name: f.text(),
  namespace: f.text({ nullable: true }),
  percentPopulated: f.num({ nullable: true }),
  isCustom: f.bool({ nullable: true }),
  lastUsedDate: f.ts({ nullable: true }),
  createdDate: f.date({ nullable: true }),
  status: f.enum(['active', 'draft'] as const, { nullable: true }),
  oauthScopes: f.textArray(),
  meta: f.json(v.unknown()),
  percentUsed: f.num({ expr: 'CASE WHEN t.cap = 0 THEN 0 ELSE t.used * 100.0 / t.cap END' }),
  secret: f.text(),
}
type Name = keyof typeof fields
/** `ghost` is whitelisted but not a field; `secret` is a field but not whitelisted. */
const filterable = ['id', 'name', 'namespace', 'percentPopulated', 'isCustom', 'lastUsedDate', 'createdDate', 'status',
  'oauthScopes', 'meta', 'percentUsed', 'ghost']

/** The column expression of a fixture field (quoting is fields.ts' business). */
const c = (n: Name) => sqlExpr(n, fields[n])

function compile(filter: string, white: readonly string[] = filterable): { sql: string; params: unknown[] } {
  const params: unknown[] = []
  const sql = compileFilter(parseRql(filter), fields, white, (value) => {
    params.push(value)
    return `$${params.length}`
  })
  return { sql, params }
}

function cerr(filter: string, white: readonly string[] = filterable): ApiError {
  try {
    compile(filter, white)
  } catch (e) {
    if (e instanceof ApiError) return e
    throw e
  }
  throw new Error(`expected ${filter} to fail`)
}

t.test('comparisons per kind: SQL text and bound values', async (t) => {
  const cases: [string, string, unknown[]][] = [
    ['eq(id,5)', `${c('id')} = $1::bigint`, [5]],
    ['eq(id,"5")', `${c('id')} = $1::bigint`, [5]],
    ['eq(id,string:-42)', `${c('id')} = $1::bigint`, [-42]],
    ['eq(id,1e3)', `${c('id')} = $1::bigint`, [1000]],
    ['eq(id,9007199254740991)', `${c('id')} = $1::bigint`, [9007199254740991]],
    ['ne(id,5)', `${c('id')} IS DISTINCT FROM $1::bigint`, [5]],
    ['lt(percentPopulated,1.5)', `${c('percentPopulated')} < $1::double precision`, [1.5]],
    ['le(percentPopulated,"2.5")', `${c('percentPopulated')} <= $1::double precision`, [2.5]],
    ['gt(percentPopulated,-1e-3)', `${c('percentPopulated')} > $1::double precision`, [-0.001]],
    ['ge(percentPopulated,7)', `${c('percentPopulated')} >= $1::double precision`, [7]],
    ['eq(isCustom,true)', `${c('isCustom')} = $1::boolean`, [true]],
    ["ne(isCustom,'false')", `${c('isCustom')} IS DISTINCT FROM $1::boolean`, [false]],
    ['gt(lastUsedDate,2024-01-31T10:00:00+02:00)', `${c('lastUsedDate')} > $1::timestamptz`, ['2024-01-31T08:00:00.000Z']],
    ['ge(lastUsedDate,2024-01-31)', `${c('lastUsedDate')} >= $1::timestamptz`, ['2024-01-31T00:00:00.000Z']],
    ['eq(lastUsedDate,"2024-01-31T10:00:00.25Z")', `${c('lastUsedDate')} = $1::timestamptz`, ['2024-01-31T10:00:00.250Z']],
    ['eq(createdDate,2024-02-29)', `${c('createdDate')} = $1::date`, ['2024-02-29']],
    ["lt(createdDate,'2024-01-01')", `${c('createdDate')} < $1::date`, ['2024-01-01']],
    ['ge(createdDate,date:0099-12-31)', `${c('createdDate')} >= $1::date`, ['0099-12-31']],
    ['eq(status,active)', `${c('status')} = $1::text`, ['active']],
    ['lt(status,"draft")', `${c('status')} < $1::text`, ['draft']],
    ['eq(name,"x")', `${c('name')} = $1::text`, ['x']],
    ['eq(name,123)', `${c('name')} = $1::text`, ['123']],
    ['eq(name,007)', `${c('name')} = $1::text`, ['007']],
    ['eq(name,1e3)', `${c('name')} = $1::text`, ['1e3']],
    ['eq(name,true)', `${c('name')} = $1::text`, ['true']],
    ['eq(name,2024-01-31T10:00Z)', `${c('name')} = $1::text`, ['2024-01-31T10:00Z']],
    ['eq(name,foo%20bar)', `${c('name')} = $1::text`, ['foo bar']],
    ['eq(name,string:null)', `${c('name')} = $1::text`, ['null']],
    ['gt(percentUsed,50)', '(CASE WHEN t.cap = 0 THEN 0 ELSE t.used * 100.0 / t.cap END) > $1::double precision', [50]],
  ]
  for (const [filter, sql, params] of cases) t.strictSame(compile(filter), { sql, params }, filter)
})

t.test('null: eq/ne with null, isNull/isNotNull', async (t) => {
  t.strictSame(compile('eq(namespace,null)'), { sql: `${c('namespace')} IS NULL`, params: [] })
  t.strictSame(compile('ne(namespace,null)'), { sql: `${c('namespace')} IS NOT NULL`, params: [] })
  t.strictSame(compile('isNull(namespace)'), { sql: `${c('namespace')} IS NULL`, params: [] })
  t.strictSame(compile('isNotNull(createdDate)'), { sql: `${c('createdDate')} IS NOT NULL`, params: [] })
})

t.test('in/out bind one array parameter', async (t) => {
  const cases: [string, string, unknown[]][] = [
    ['in(id,1,2,3)', `${c('id')} = ANY(ARRAY(SELECT unnest($1::text[])::bigint))`, [['1', '2', '3']]],
    ['in(id,(1,"2"))', `${c('id')} = ANY(ARRAY(SELECT unnest($1::text[])::bigint))`, [['1', '2']]],
    ['in(name,a,7)', `${c('name')} = ANY($1::text[])`, [['a', '7']]],
    ['in(percentPopulated,1.5,2)', `${c('percentPopulated')} = ANY(ARRAY(SELECT unnest($1::text[])::double precision))`, [['1.5', '2']]],
    ['in(isCustom,true)', `${c('isCustom')} = ANY(ARRAY(SELECT unnest($1::text[])::boolean))`, [['true']]],
    ['in(isCustom,true,false)', `${c('isCustom')} = ANY(ARRAY(SELECT unnest($1::text[])::boolean))`, [['true', 'false']]],
    ['in(lastUsedDate,2024-01-31T10:00:00Z,2024-02-01)', `${c('lastUsedDate')} = ANY(ARRAY(SELECT unnest($1::text[])::timestamptz))`,
      [['2024-01-31T10:00:00.000Z', '2024-02-01T00:00:00.000Z']]],
    ['in(createdDate,2024-01-31)', `${c('createdDate')} = ANY(ARRAY(SELECT unnest($1::text[])::date))`, [['2024-01-31']]],
    ['in(status,active,draft)', `${c('status')} = ANY($1::text[])`, [['active', 'draft']]],
    ['in(namespace,a,null)', `(${c('namespace')} IS NULL OR ${c('namespace')} = ANY($1::text[]))`, [['a']]],
    ['in(namespace,null)', `${c('namespace')} IS NULL`, []],
    ['out(id,1,2)', `(${c('id')} IS NULL OR NOT (${c('id')} = ANY(ARRAY(SELECT unnest($1::text[])::bigint))))`, [['1', '2']]],
    ['out(namespace,a,null)', `(${c('namespace')} IS NOT NULL AND NOT (${c('namespace')} = ANY($1::text[])))`, [['a']]],
    ['out(namespace,(null))', `${c('namespace')} IS NOT NULL`, []],
  ]
  for (const [filter, sql, params] of cases) t.strictSame(compile(filter), { sql, params }, filter)
  const ids = Array.from({ length: 1000 }, (_, i) => i + 1)
  t.strictSame(compile(`in(id,${ids.join(',')})`), { sql: `((${c('id')} IN (SELECT unnest($1::text[])::bigint)) IS TRUE)`, params: [ids.map(String)] })
})

t.test('lists of HASHED_LIST_FROM values or more are matched through a hash (a sub-select), NULL semantics kept', async (t) => {
  t.equal(HASHED_LIST_FROM, 9)
  const nine = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i']
  const name = c('name')
  const ns = c('namespace')
  const cases: [string, string, unknown[]][] = [
    [`in(name,${nine.slice(0, 8).join(',')})`, `${name} = ANY($1::text[])`, [nine.slice(0, 8)]],
    [`in(name,${nine.join(',')})`, `((${name} IN (SELECT unnest($1::text[]))) IS TRUE)`, [nine]],
    [`in(namespace,${nine.join(',')},null)`, `(${ns} IS NULL OR ${ns} IN (SELECT unnest($1::text[])))`, [nine]],
    [`out(namespace,${nine.join(',')})`, `(${ns} IS NULL OR NOT (${ns} IN (SELECT unnest($1::text[]))))`, [nine]],
    [`out(namespace,${nine.join(',')},null)`, `(${ns} IS NOT NULL AND NOT (${ns} IN (SELECT unnest($1::text[]))))`, [nine]],
    [`in(lastUsedDate,${nine.map((_, i) => `2024-01-0${i + 1}`).join(',')})`,
      `((${c('lastUsedDate')} IN (SELECT unnest($1::text[])::timestamptz)) IS TRUE)`, [nine.map((_, i) => `2024-01-0${i + 1}T00:00:00.000Z`)]],
    [`out(isCustom,${nine.map((_, i) => i % 2 === 0).join(',')})`,
      `(${c('isCustom')} IS NULL OR NOT (${c('isCustom')} IN (SELECT unnest($1::text[])::boolean)))`, [nine.map((_, i) => String(i % 2 === 0))]],
  ]
  for (const [filter, sql, params] of cases) t.strictSame(compile(filter), { sql, params }, filter)
})

t.test('many comparisons of one field under and/or are one condition', async (t) => {
  const name = c('name')
  const id = c('id')
  const list = (op: string, field: string, n: number, v: (i: number) => string) => Array.from({ length: n }, (_, i) => `${op}(${field},${v(i)})`).join(',')
  const nine = Array.from({ length: 9 }, (_, i) => `x${i}`)
  // Equalities under or: an in list (from nine on; eight stay comparisons); inequalities under and: an out list.
  t.strictSame(compile(`or(${list('eq', 'name', 9, (i) => `x${i}`)})`), { sql: `((${name} IN (SELECT unnest($1::text[]))) IS TRUE)`, params: [nine] })
  t.equal(compile(`or(${list('eq', 'name', 8, (i) => `x${i}`)})`).sql.match(/ = \$/g)?.length, 8)
  t.strictSame(compile(`and(${list('ne', 'name', 9, (i) => `x${i}`)})`), { sql: `(${name} IS NULL OR NOT (${name} IN (SELECT unnest($1::text[]))))`, params: [nine] })
  // Bounds from two on: the loosest under or, the tightest under and, found once.
  t.strictSame(compile('or(lt(id,5),lt(id,7))'), { sql: `${id} < (SELECT max(v::bigint) FROM unnest($1::text[]) v)`, params: [['5', '7']] })
  t.strictSame(compile('and(ge(name,b),ge(name,a))'), { sql: `${name} >= (SELECT max(v) FROM unnest($1::text[]) v)`, params: [['b', 'a']] })
  t.strictSame(compile('and(le(lastUsedDate,2024-01-01),le(lastUsedDate,2023-01-01))'),
    { sql: `${c('lastUsedDate')} <= (SELECT min(v::timestamptz) FROM unnest($1::text[]) v)`, params: [['2024-01-01T00:00:00.000Z', '2023-01-01T00:00:00.000Z']] })
  // Not merged: one comparison, different operators, eq under and, null values; others keep their place and order.
  t.strictSame(compile('or(lt(id,5),le(id,7))'), { sql: `(${id} < $1::bigint OR ${id} <= $2::bigint)`, params: [5, 7] })
  t.strictSame(compile('and(eq(id,5),eq(id,7))'), { sql: `(${id} = $1::bigint AND ${id} = $2::bigint)`, params: [5, 7] })
  t.strictSame(compile('or(eq(namespace,null),gt(id,1),isNull(name),gt(id,2))'),
    { sql: `(${c('namespace')} IS NULL OR ${id} > (SELECT min(v::bigint) FROM unnest($1::text[]) v) OR ${name} IS NULL)`, params: [['1', '2']] })
  // The first mistake is reported, as without the rewrite: here the unknown field before the bad value of the group.
  const e = cerr(`or(${list('eq', 'id', 4, (i) => String(i))},eq(nope,1),${list('eq', 'id', 5, () => 'abc')})`)
  t.equal(e.code, 'unknown_filter_field')
  t.equal(cerr(`or(${list('eq', 'id', 4, (i) => String(i))},eq(id,abc),${list('eq', 'id', 5, () => '1')},eq(nope,1))`).code, 'invalid_filter_value')
})

t.test('ilike: the pattern is lowered once; a field with several ilike is lowered once per row', async (t) => {
  const name = c('name')
  const pat = (n: number) => `(SELECT lower($${n}::text))`
  t.strictSame(compile('ilike(name,*a*)'), { sql: `lower(${name}) LIKE ${pat(1)}`, params: ['%a%'] })
  t.strictSame(compile('or(ilike(name,*a*),ilike(status,b*))'), { sql: `(lower(${name}) LIKE ${pat(1)} OR lower(${c('status')}) LIKE ${pat(2)})`, params: ['%a%', 'b%'] })
  t.strictSame(compile('or(eq(id,1),ilike(name,*a*),eq(id,2),not(ilike(name,*b*)))'), {
    sql: `(${c('id')} = $1::bigint OR (SELECT (lw1.l1 LIKE ${pat(2)} OR ((lw1.l1 LIKE ${pat(4)}) IS NOT TRUE)) FROM (SELECT lower(${name}) AS l1 OFFSET 0) lw1) OR ${c('id')} = $3::bigint)`,
    params: [1, '%a%', 2, '%b%'],
  })
  // Lowered where all of the field's patterns meet: here inside the `and`, not at the top.
  t.strictSame(compile('or(eq(id,1),and(ilike(name,a*),ilike(name,*b)))'), {
    sql: `(${c('id')} = $1::bigint OR (SELECT (lw1.l1 LIKE ${pat(2)} AND lw1.l1 LIKE ${pat(3)}) FROM (SELECT lower(${name}) AS l1 OFFSET 0) lw1))`,
    params: [1, 'a%', '%b'],
  })
})

t.test('like/ilike: * is the wildcard, % _ \\ are escaped', async (t) => {
  t.strictSame(compile('like(name,*foo*)'), { sql: `${c('name')} LIKE $1::text`, params: ['%foo%'] })
  t.strictSame(compile("ilike(name,'50%_off\\\\*')"), { sql: `lower(${c('name')}) LIKE (SELECT lower($1::text))`, params: ['50\\%\\_off\\\\%'] })
  t.strictSame(compile('like(name,12*)'), { sql: `${c('name')} LIKE $1::text`, params: ['12%'] })
  t.strictSame(compile('like(name,1e3)'), { sql: `${c('name')} LIKE $1::text`, params: ['1e3'] })
  t.strictSame(compile('ilike(status,act*)'), { sql: `lower(${c('status')}) LIKE (SELECT lower($1::text))`, params: ['act%'] })
})

t.test('and/or/not: parenthesised, placeholders in order', async (t) => {
  t.strictSame(compile('and(isNull(namespace),gt(percentPopulated,2))'),
    { sql: `(${c('namespace')} IS NULL AND ${c('percentPopulated')} > $1::double precision)`, params: [2] })
  t.strictSame(compile('eq(id,1)|eq(id,2)'), { sql: `(${c('id')} = $1::bigint OR ${c('id')} = $2::bigint)`, params: [1, 2] })
  t.strictSame(compile('not(eq(id,1))'), { sql: `((${c('id')} = $1::bigint) IS NOT TRUE)`, params: [1] })
  t.strictSame(compile('and(eq(id,1),or(eq(name,a),not(in(id,2,3))))'), {
    sql: `(${c('id')} = $1::bigint AND (${c('name')} = $2::text OR ((${c('id')} = ANY(ARRAY(SELECT unnest($3::text[])::bigint))) IS NOT TRUE)))`,
    params: [1, 'a', ['2', '3']],
  })
})

t.test('unknown fields list the whitelist, at the offset of their name', async (t) => {
  for (const [filter, field, offset] of [
    ['eq(secret,1)', 'secret', 3], ['and(isNull(name),eq(nope,1))', 'nope', 20], ['isNull(ghost)', 'ghost', 7],
    ['eq(__proto__,1)', '__proto__', 3], ['eq(constructor,1)', 'constructor', 3], ['in(toString,1)', 'toString', 3],
    ['isNull(hasOwnProperty)', 'hasOwnProperty', 7], ['eq(valueOf,1)', 'valueOf', 3], ['eq( idOR1 ,1)', 'idOR1', 4],
  ] as const) {
    const e = cerr(filter)
    t.equal(e.code, 'unknown_filter_field', filter)
    t.equal(e.message, `Unknown filter field "${field}"`, `${filter}: no name is near enough to suggest`)
    t.strictSame(e.extras, { parameter: 'filter', field, allowed: filterable, offset })
    t.equal(filter.slice(offset, offset + field.length), field, `${filter}: the offset points at the name`)
  }
  for (const [filter, near, offset] of [['eq(percentpopulated,1)', 'percentPopulated', 3], ['or(eq(id,1), isNull(namespce))', 'namespace', 20], ['eq(Status,x)', 'status', 3]] as const) {
    const e = cerr(filter)
    t.equal(e.message, `Unknown filter field "${filter.slice(offset).match(/^\w+/)![0]}"; did you mean "${near}"?`, `${filter}: the nearest name`)
    t.equal(e.extras.offset, offset)
  }
  t.equal(cerr('eq(constructor,1)', ['constructor']).code, 'unknown_filter_field', 'a whitelisted name must be an own field')
  t.equal(cerr('eq(id,1)', []).code, 'unknown_filter_field')
})

t.test('operators a kind does not support', async (t) => {
  const ordered = ['eq', 'ne', 'in', 'out', 'isNull', 'isNotNull', 'lt', 'le', 'gt', 'ge']
  const cases: [string, string, string, readonly string[] | undefined][] = [
    ['like(id,1)', 'id', 'Operator "like" is not supported on field "id" (int)', ordered],
    ['ilike(createdDate,x)', 'createdDate', 'Operator "ilike" is not supported on field "createdDate" (date)', ordered],
    ['lt(isCustom,true)', 'isCustom', 'Operator "lt" is not supported on field "isCustom" (bool)', ordered.slice(0, 6)],
    ['eq(oauthScopes,x)', 'oauthScopes', 'Field "oauthScopes" (textArray) cannot be used in a filter', undefined],
    ['isNull(meta)', 'meta', 'Field "meta" (json) cannot be used in a filter', undefined],
    ['in(meta,1)', 'meta', 'Field "meta" (json) cannot be used in a filter', undefined],
  ]
  for (const [filter, field, message, allowed] of cases) {
    const e = cerr(filter)
    t.equal(e.code, 'unsupported_filter_operator', filter)
    t.equal(e.message, message)
    t.strictSame(e.extras, { parameter: 'filter', field, offset: 0, ...(allowed ? { allowed } : {}) })
  }
})

t.test('values that do not fit the field', async (t) => {
  const ts = 'an ISO 8601 timestamp such as 2024-01-31T10:00:00Z'
  const cases: [string, string, number, string][] = [
    ['eq(id,1.5)', 'id', 6, 'Field "id" expects an integer, got 1.5'],
    ['eq(id,abc)', 'id', 6, 'Field "id" expects an integer, got "abc"'],
    ['eq(id,true)', 'id', 6, 'Field "id" expects an integer, got true'],
    ['eq(id,"1.0")', 'id', 6, 'Field "id" expects an integer, got "1.0"'],
    ['eq(id,1e400)', 'id', 6, 'Field "id" expects an integer, got "1e400"'],
    ['eq(id,2024-01-01)', 'id', 6, 'Field "id" expects an integer, got date 2024-01-01T00:00:00.000Z'],
    ['eq(id,9007199254740992)', 'id', 6, 'Integer 9007199254740992 is out of range for field "id"'],
    ['eq(id,"-99999999999999999999")', 'id', 6, 'Integer "-99999999999999999999" is out of range for field "id"'],
    ['in(id,1,x,3)', 'id', 8, 'Field "id" expects an integer, got "x"'],
    ['out(id,(1,2.5))', 'id', 10, 'Field "id" expects an integer, got 2.5'],
    ['gt(percentPopulated,abc)', 'percentPopulated', 20, 'Field "percentPopulated" expects a number, got "abc"'],
    ['gt(percentPopulated,"1e999")', 'percentPopulated', 20, 'Field "percentPopulated" expects a number, got "1e999"'],
    ['eq(isCustom,1)', 'isCustom', 12, 'Field "isCustom" expects true or false, got 1'],
    ['eq(isCustom,yes)', 'isCustom', 12, 'Field "isCustom" expects true or false, got "yes"'],
    ['gt(lastUsedDate,yesterday)', 'lastUsedDate', 16, `Field "lastUsedDate" expects ${ts}, got "yesterday"`],
    ['gt(lastUsedDate,"2024-02-30")', 'lastUsedDate', 16, `Field "lastUsedDate" expects ${ts}, got "2024-02-30"`],
    ['gt(lastUsedDate,2024-01-31T10:00:00)', 'lastUsedDate', 16, `Field "lastUsedDate" expects ${ts}, got "2024-01-31T10:00:00"`],
    ['gt(lastUsedDate,5)', 'lastUsedDate', 16, `Field "lastUsedDate" expects ${ts}, got 5`],
    ['eq(createdDate,2024-01-31T10:00:00Z)', 'createdDate', 15,
      'Field "createdDate" expects a date without a time, got date 2024-01-31T10:00:00.000Z'],
    ['eq(createdDate,5)', 'createdDate', 15, 'Field "createdDate" expects a date such as 2024-01-31, got 5'],
    ['eq(name,number:5)', 'name', 8, 'Field "name" expects a string, got 5'],
    ['eq(name,date:2024-01-01)', 'name', 8, 'Field "name" expects a string, got date 2024-01-01T00:00:00.000Z'],
    ['lt(name,null)', 'name', 8, 'lt() cannot compare with null; use eq, ne, isNull or isNotNull'],
    ['like(name,null)', 'name', 10, 'like() cannot compare with null; use eq, ne, isNull or isNotNull'],
  ]
  for (const [filter, field, offset, message] of cases) {
    const e = cerr(filter)
    t.equal(e.code, 'invalid_filter_value', filter)
    t.equal(e.status, 400)
    t.equal(e.message, message, filter)
    t.strictSame(e.extras, { parameter: 'filter', field, offset }, filter)
  }
  const e = cerr('eq(status,archived)')
  t.equal(e.code, 'invalid_filter_value')
  t.equal(e.message, 'Field "status" must be one of active, draft; got "archived"')
  t.strictSame(e.extras, { parameter: 'filter', field: 'status', offset: 10, allowed: ['active', 'draft'] })
})

t.test('SQL injection: values are only ever bound', async (t) => {
  const name = c('name')
  t.strictSame(compile(`eq(name,"x' OR 1=1 --")`), { sql: `${name} = $1::text`, params: ["x' OR 1=1 --"] })
  t.strictSame(compile(`eq(name,'x\\' OR 1=1 --')`), { sql: `${name} = $1::text`, params: ["x' OR 1=1 --"] })
  t.strictSame(compile('eq(name,x;DROP%20TABLE%20fields)'), { sql: `${name} = $1::text`, params: ['x;DROP TABLE fields'] })
  t.strictSame(compile('in(name,x;DROP,"1);--")'), { sql: `${name} = ANY($1::text[])`, params: [['x;DROP', '1);--']] })
  t.strictSame(compile(`like(name,'*\\'; DELETE FROM t; --*')`), { sql: `${name} LIKE $1::text`, params: ["%'; DELETE FROM t; --%"] })
  for (const filter of ["eq(name,'x'' OR 1=1 --')", 'eq(name,x;DROP TABLE fields)', 'eq(t.id,1)', 'eq("id) OR (1=1",1)',
    'eq(id) OR (1=1,1)', 'eq(id;--,1)', 'eq(id/**/,1)']) {
    t.equal(cerr(filter).code, 'filter_parse_error', filter)
  }
  const printable = fc.string({ unit: 'binary' }).filter((x) => !/[\u0000-\u001f\u007f]/.test(x))
  fc.assert(fc.property(printable, printable, (a, b) => {
    const q = (s: string) => `'${s.replace(/[\\']/g, '\\$&')}'`
    const r = compile(`or(eq(name,${q(a)}),in(namespace,${q(b)},${q(a)}))`)
    assert.deepStrictEqual(r, { sql: `(${name} = $1::text OR ${c('namespace')} = ANY($2::text[]))`, params: [a, [b, a]] })
  }), { numRuns: 500 })
  t.pass('arbitrary quoted strings never reach the SQL text')
  fc.assert(fc.property(printable, fc.integer({ min: 0, max: 31 }), printable, (a, code, b) => {
    const err = cerr(`eq(name,'${(a + String.fromCharCode(code) + b).replace(/[\\']/g, '\\$&')}')`)
    assert.equal(err.code, 'filter_parse_error')
    assert.equal(err.extras.offset, 8, 'the offset of the value')
  }), { numRuns: 300 })
  t.pass('a control character anywhere in a value is a parse error at the value')
})

t.test('malformed ASTs are server faults, not client errors', async (t) => {
  const bind = () => '$1'
  t.throws(() => compileFilter({ type: 'and', args: [], offset: 0 }, fields, filterable, bind), { name: 'Error' })
  t.throws(() => compileFilter({ type: 'bogus' } as never, fields, filterable, bind), /Unknown RQL node type "bogus"/)
  t.notOk((() => { try { compileFilter({ type: 'bogus' } as never, fields, filterable, bind) } catch (e) { return e instanceof ApiError } })())
})

t.test('compiled filters run on PostgreSQL with the intended semantics', async (t) => {
  // A database with no tables (the embedded one, or a new one on TEST_DATABASE_URL), driven as the service drives it
  const tdb = await createTestDatabase({ template: 'bare' })
  const db = await openDatabase({ databaseUrl: tdb.databaseUrl, dataDir: tdb.dataDir })
  t.teardown(async () => {
    await db.close()
    await tdb.drop()
  })
  await db.sql.unsafe(`
    CREATE TABLE rows (id bigint, name text, namespace text, percent_populated double precision, is_custom boolean,
      last_used_date timestamptz, created_date date, status text, cap int, used int);
    INSERT INTO rows VALUES
      (1, 'Alpha',    NULL,   1.5,  true,  '2024-01-31T10:00:00Z', '2024-01-31', 'active', 100, 50),
      (2, 'beta_50%', 'npsp', 80,   false, '2023-06-01T00:00:00Z', '2023-06-01', 'draft',  0,   0),
      (3, 'Gamma*',   'acme', NULL, NULL,  NULL,                   NULL,         NULL,     10,  10),
      (4, 'a\\b',     'npsp', 0,    true,  '2024-02-29T23:59:59Z', '2024-02-29', 'active', 200, 20);`)
  const ids = async (filter: string) => {
    const { sql, params } = compile(filter)
    const rows = await db.sql.unsafe<{ id: string }[]>(`SELECT t.id FROM rows AS t WHERE ${sql} ORDER BY t.id`, params as never[])
    return rows.map((row) => Number(row.id))
  }
  const cases: [string, number[]][] = [
    ['isNull(namespace)', [1]], ['isNotNull(namespace)', [2, 3, 4]],
    ['ne(namespace,npsp)', [1, 3]], ['not(eq(namespace,npsp))', [1, 3]], ['out(namespace,npsp)', [1, 3]],
    ['out(namespace,npsp,null)', [3]], ['in(namespace,npsp,null)', [1, 2, 4]], ['eq(namespace,null)', [1]],
    ['in(id,1,3)', [1, 3]], ['out(id,(1,3))', [2, 4]],
    ['like(name,*50%25*)', [2]], ['like(name,beta_*)', [2]], ['like(name,Alph_)', []], ['like(name,*%25)', [2]],
    ['ilike(name,alpha)', [1]], ['like(name,alpha)', []], ["like(name,'a\\\\b')", [4]], ['like(name,Gamma*)', [3]],
    ['gt(percentUsed,40)', [1, 3]],
    ['gt(lastUsedDate,2024-01-31T09:00:00-02:00)', [4]], ['ge(lastUsedDate,2024-01-31)', [1, 4]],
    ['in(lastUsedDate,2024-01-31T12:00:00+02:00)', [1]],
    ['eq(createdDate,2024-02-29)', [4]], ['lt(createdDate,2024-01-31)', [2]], ['in(createdDate,2024-01-31,2023-06-01)', [1, 2]],
    ['eq(isCustom,true)', [1, 4]], ['ne(isCustom,true)', [2, 3]], ['in(status,active)', [1, 4]],
    ['and(eq(isCustom,true),or(isNull(namespace),gt(percentPopulated,1)))', [1]],
    ['eq(percentPopulated,1.5)|eq(id,3)', [1, 3]], ['not(gt(percentPopulated,1))', [3, 4]],
    ['not(and(eq(isCustom,true),ne(id,4)))', [2, 3, 4]],
    [`in(id,${Array.from({ length: 1000 }, (_, i) => i + 2).join(',')})`, [2, 3, 4]],
  ]
  for (const [filter, expected] of cases) t.strictSame(await ids(filter), expected, filter)

  // Every filter the compiler accepts is valid SQL; everything it rejects is a 400-class ApiError.
  const field = fc.constantFrom('id', 'name', 'namespace', 'percentPopulated', 'isCustom', 'lastUsedDate', 'createdDate',
    'status', 'percentUsed')
  const value = fc.constantFrom('1', '-2.5', 'true', 'null', 'active', '"7"', "'x y'", '2024-01-31', '2024-01-31T10:00:00Z',
    'string:1', 'number:3', 'date:2024-02-29', 'boolean:false', '*a_%25*', 'abc')
  const leaf = fc.oneof(
    fc.tuple(fc.constantFrom('eq', 'ne', 'lt', 'le', 'gt', 'ge', 'like', 'ilike'), field, value).map(([o, f, x]) => `${o}(${f},${x})`),
    fc.tuple(fc.constantFrom('in', 'out'), field, fc.array(value, { minLength: 1, maxLength: 3 })).map(([o, f, x]) => `${o}(${f},${x.join(',')})`),
    fc.tuple(fc.constantFrom('isNull', 'isNotNull'), field).map(([o, f]) => `${o}(${f})`),
  )
  const filters = fc.array(leaf, { minLength: 1, maxLength: 3 })
    .chain((ls) => fc.constantFrom(ls[0], `and(${ls.join(',')})`, `or(${ls.join(',')})`, `not(${ls[0]})`))
  const samples = fc.sample(filters, { numRuns: 400, seed: 42 })
  let ran = 0
  for (const filter of samples) {
    try {
      await ids(filter)
      ran++
    } catch (e) {
      if (!(e instanceof ApiError) || e.status !== 400) t.fail(`${filter}: ${String(e)}`)
    }
  }
  t.ok(ran > 100, `${ran} of ${samples.length} random filters compiled and ran`)
})

t.test('rewritten filters select the rows their plain SQL does: random filters on the database', async (t) => {
  // The reference is each condition's meaning written plainly (ILIKE, `= ANY` over a typed array, one comparison per
  // condition), as the compiler wrote it before the rewrites (hashed lists, merged comparisons, lowered patterns).
  const tdb = await createTestDatabase({ template: 'bare' })
  const db = await openDatabase({ databaseUrl: tdb.databaseUrl, dataDir: tdb.dataDir })
  t.teardown(async () => {
    await db.close()
    await tdb.drop()
  })
  const rand = fc.sample(fc.integer({ min: 0, max: 1_000_000 }), { numRuns: 4000, seed: 7 })
  let k = 0
  const pick = <T>(xs: readonly T[]): T => xs[rand[k++ % rand.length] % xs.length]
  // Values that make equalities hit and put case folding to work (ß, dotted İ, final sigma, titlecase ǅ, Kelvin sign).
  const pools = {
    name: ['Alpha', 'alpha', 'ALPHA', 'beta_50%', 'Gamma*', 'a\\b', 'Straße', 'STRASSE', 'İstanbul', 'istanbul', 'ΣΊΣΥΦΟΣ', 'σίσυφος', 'ǅemal', '\u212Aelvin', 'kelvin', 'émile', 'ÉMILE', 'x', ''],
    namespace: [null, 'npsp', 'NPSP', 'acme', 'Acme', 'straße'],
    percentPopulated: [null, 0, 1.5, -2, 80, 1e6],
    isCustom: [null, true, false],
    lastUsedDate: [null, '2024-01-31T10:00:00Z', '2023-06-01T00:00:00Z', '2024-02-29T23:59:59Z', '1999-12-31T23:00:00Z'],
    createdDate: [null, '2024-01-31', '2023-06-01', '2024-02-29'],
    status: [null, 'active', 'draft'],
  } as const
  type Field = keyof typeof pools | 'id' | 'percentUsed'
  await db.sql.unsafe(`CREATE TABLE rows (id bigint, name text, namespace text, percent_populated double precision, is_custom boolean,
      last_used_date timestamptz, created_date date, status text, cap int, used int)`)
  for (let id = 1; id <= 80; id++) {
    await db.sql.unsafe('INSERT INTO rows VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)', [id, pick(pools.name), pick(pools.namespace),
      pick(pools.percentPopulated), pick(pools.isCustom), pick(pools.lastUsedDate), pick(pools.createdDate), pick(pools.status), pick([0, 10, 100]), pick([0, 5, 50])] as never[])
  }
  const kinds: Record<Field, string> = { id: 'bigint', name: 'text', namespace: 'text', percentPopulated: 'double precision', isCustom: 'boolean',
    lastUsedDate: 'timestamptz', createdDate: 'date', status: 'text', percentUsed: 'double precision' }
  const valuesOf = (f: Field): readonly unknown[] => (f === 'id' ? [1, 2, 3, 40, 79, 80, 81] : f === 'percentUsed' ? [0, 5, 10, 50, 100] : pools[f])
  const ordered = (f: Field) => f !== 'isCustom'
  const textual = (f: Field) => f === 'name' || f === 'namespace' || f === 'status'
  const lit = (v: unknown) => (v === null ? 'null' : typeof v === 'string' ? `'${v.replace(/[\\']/g, '\\$&')}'` : String(v))
  const patterns = ['*a*', 'a*', '*E', 'stra*', '*SS*', 'σ*', 'i*', '*\u212A*', 'ǆ*', '*_50*', 'ÉM*', '*']

  /** A random condition: its RQL and its plain SQL (values bound through `bind`). */
  type Cond = { rql: string; sql: (bind: (v: unknown) => string) => string }
  const col = (f: Field) => c(f as Name)
  const typed = (f: Field, v: unknown) => (bind: (v: unknown) => string) => `${bind(v)}::${kinds[f]}`
  function leaf(f: Field, op: string): Cond {
    const v = pick(valuesOf(f).filter((x) => x !== null || op === 'eq' || op === 'ne'))
    if (op === 'like' || op === 'ilike') {
      const p = pick(patterns)
      return { rql: `${op}(${f},${lit(p)})`, sql: (b) => `${col(f)} ${op === 'like' ? 'LIKE' : 'ILIKE'} ${b(likePattern(p))}::text` }
    }
    if (v === null) return { rql: `${op}(${f},null)`, sql: () => `${col(f)} ${op === 'eq' ? 'IS NULL' : 'IS NOT NULL'}` }
    const sqlOp = { eq: '=', ne: 'IS DISTINCT FROM', lt: '<', le: '<=', gt: '>', ge: '>=' }[op]
    return { rql: `${op}(${f},${lit(v)})`, sql: (b) => `${col(f)} ${sqlOp} ${typed(f, v)(b)}` }
  }
  function set(f: Field, op: 'in' | 'out', n: number): Cond {
    const withNull = pick([0, 1]) === 0
    const vs = Array.from({ length: n }, () => pick(valuesOf(f).filter((v) => withNull || v !== null)))
    const list = vs.filter((v) => v !== null).map(String)
    const hasNull = vs.includes(null)
    const any = (b: (v: unknown) => string) => `${col(f)} = ANY(${b(list)}::text[]::${kinds[f]}[])`
    const sql = (b: (v: unknown) => string) => op === 'in'
      ? (list.length === 0 ? `${col(f)} IS NULL` : hasNull ? `(${col(f)} IS NULL OR ${any(b)})` : any(b))
      : (list.length === 0 ? `${col(f)} IS NOT NULL` : hasNull ? `(${col(f)} IS NOT NULL AND NOT (${any(b)}))` : `(${col(f)} IS NULL OR NOT (${any(b)}))`)
    return { rql: `${op}(${f},${vs.map(lit).join(',')})`, sql }
  }
  const fields: Field[] = ['id', 'name', 'namespace', 'percentPopulated', 'isCustom', 'lastUsedDate', 'createdDate', 'status', 'percentUsed']
  function opsOf(f: Field): string[] {
    return ['eq', 'ne', ...(ordered(f) ? ['lt', 'le', 'gt', 'ge'] : []), ...(textual(f) ? ['like', 'ilike', 'ilike'] : [])]
  }
  function randomLeaf(): Cond {
    const f = pick(fields)
    const r = pick([0, 1, 2, 3, 4, 5, 6, 7])
    if (r === 0) return set(f, pick(['in', 'out'] as const), pick([1, 3, 8, 9, 12, 20]))
    if (r === 1) return { rql: `isNull(${f})`, sql: () => `${col(f)} IS NULL` }
    return leaf(f, pick(opsOf(f)))
  }
  function tree(depth: number): Cond {
    if (depth === 0 || pick([0, 1, 2]) === 0) return randomLeaf()
    if (pick([0, 1, 2, 3]) === 0) {
      const a = tree(depth - 1)
      return { rql: `not(${a.rql})`, sql: (b) => `((${a.sql(b)}) IS NOT TRUE)` }
    }
    const op = pick(['and', 'or'] as const)
    // Often many comparisons of one field with one operator (what the compiler merges), among other conditions.
    const args: Cond[] = []
    if (pick([0, 1]) === 0) {
      const f = pick(fields)
      const o = pick(opsOf(f))
      for (let i = pick([2, 3, 8, 9, 10, 14]); i > 0; i--) args.push(leaf(f, o))
    } else if (pick([0, 1]) === 0) {
      // Patterns of one field in several arguments, some nested (what the compiler lowers once per row).
      const f = pick(['name', 'namespace', 'status'] as const)
      for (let i = pick([2, 3]); i > 0; i--) {
        const [x, y] = [leaf(f, 'ilike'), randomLeaf()]
        args.push(pick([0, 1]) ? x : { rql: `or(${x.rql},${y.rql})`, sql: (b) => `(${x.sql(b)} OR ${y.sql(b)})` })
      }
    }
    for (let i = pick([1, 2, 3]); i > 0; i--) args.push(tree(depth - 1))
    for (let i = args.length - 1; i > 0; i--) {
      const j = pick([...Array(i + 1).keys()])
      ;[args[i], args[j]] = [args[j], args[i]]
    }
    return { rql: `${op}(${args.map((a) => a.rql).join(',')})`, sql: (b) => `(${args.map((a) => a.sql(b)).join(op === 'and' ? ' AND ' : ' OR ')})` }
  }
  const ids = async (where: string, params: unknown[]) =>
    (await db.sql.unsafe<{ id: string }[]>(`SELECT t.id FROM rows AS t WHERE ${where} ORDER BY t.id`, params as never[])).map((r) => Number(r.id))
  const seen = { hashed: 0, bound: 0, lowered: 0, matched: 0 }
  let compared = 0
  for (let i = 0; i < 300; i++) {
    const cond = tree(3)
    let compiled: { sql: string; params: unknown[] }
    try {
      compiled = compile(cond.rql)
    } catch (e) {
      if (e instanceof ApiError && e.code === 'filter_too_complex') continue
      throw e
    }
    const params: unknown[] = []
    const reference = cond.sql((v) => (params.push(v), `$${params.length}`))
    const got = await ids(compiled.sql, compiled.params)
    const want = await ids(reference, params)
    if (JSON.stringify(got) !== JSON.stringify(want)) t.fail(`${cond.rql}\n  got  ${got}\n  want ${want}\n  sql  ${compiled.sql}`)
    compared++
    if (compiled.sql.includes('IN (SELECT unnest(')) seen.hashed++
    if (/\(SELECT m(ax|in)\(/.test(compiled.sql)) seen.bound++
    if (compiled.sql.includes('OFFSET 0) lw')) seen.lowered++
    if (got.length > 0 && got.length < 80) seen.matched++
  }
  t.ok(compared >= 250, `${compared} random filters compared with their plain SQL`)
  t.ok(seen.hashed > 20 && seen.bound > 20 && seen.lowered > 20, `the rewrites were exercised: ${JSON.stringify(seen)}`)
  t.ok(seen.matched > 100, 'most filters selected some rows and not all')
})
