// oidc-provider (a dev dependency: the real upstream OpenID Connect provider of test/oauth/oauth-upstream.test.ts) ships
// no type declarations; the test uses it untyped.
declare module 'oidc-provider' {
  const Provider: any
  export default Provider
}
