/** RQL filters: parse the `filter` parameter to an AST, compile the AST to parameterised SQL (docs/rql.md). */
export { parseRql } from './parse.ts'
export { compileFilter, filterOperators, likePattern } from './compile.ts'
export { DEFAULT_RQL_LIMITS, RQL_HARD_MAX_DEPTH, parseIsoDate, parseNumberText } from './ast.ts'
export type {
  RqlCmp, RqlCmpOp, RqlLimits, RqlLiteral, RqlLogical, RqlNode, RqlNot, RqlNull, RqlNullOp, RqlSet, RqlSetOp, RqlValue,
} from './ast.ts'
