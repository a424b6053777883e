/**
 * The keys that sign access tokens (ES256), kept in the database so every process signs and verifies with the same
 * set. The newest key signs; a key older than `rotateMs` is replaced by a new one at the next signature, and a
 * replaced key stays published (JWKS) and accepted until every token it signed has expired. Private keys are
 * encrypted at rest with a key derived from the pepper. A token naming a key this process does not know makes it
 * reload the set (at most once a second), so a key another process created is found.
 */
import { exportJWK, generateKeyPair, importJWK, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose'
import { randomBytes } from 'node:crypto'
import type postgres from 'postgres'
import type { Clock } from '../../core/config-types.ts'
import { seal, unseal } from './crypto.ts'

export const ALG = 'ES256'

interface LoadedKey {
  kid: string
  publicJwk: JWK
  publicKey: CryptoKey
  privateKey: CryptoKey
  createdAt: number
  retiredAt: number | null
}

export interface SigningKeyOptions {
  /** Age after which the signing key is replaced. */
  rotateMs: number
  /** How long a replaced key keeps verifying: the longest access-token lifetime. */
  graceMs: number
}

export class SigningKeys {
  private keys: LoadedKey[] = []
  private loadedAt = -Infinity
  private loading?: Promise<void>

  constructor(
    private readonly sql: postgres.Sql,
    private readonly pepper: string,
    private readonly clock: Clock,
    private readonly opts: SigningKeyOptions,
  ) {}

  private async load(): Promise<void> {
    const rows = await this.sql<{ kid: string; public_jwk: JWK; private_jwk_enc: Buffer; created_at: Date; retired_at: Date | null }[]>`
      SELECT kid, public_jwk, private_jwk_enc, created_at, retired_at FROM oauth_signing_keys
      WHERE retired_at IS NULL OR retired_at > ${new Date(this.clock() - this.opts.graceMs)}
      ORDER BY created_at DESC, kid`
    const keys: LoadedKey[] = []
    for (const r of rows) {
      const known = this.keys.find((k) => k.kid === r.kid)
      if (known) {
        keys.push({ ...known, retiredAt: r.retired_at ? r.retired_at.getTime() : null })
        continue
      }
      const privateJwk = JSON.parse(unseal(this.pepper, Buffer.from(r.private_jwk_enc))) as JWK
      keys.push({
        kid: r.kid,
        publicJwk: r.public_jwk,
        publicKey: (await importJWK(r.public_jwk, ALG)) as CryptoKey,
        privateKey: (await importJWK(privateJwk, ALG)) as CryptoKey,
        createdAt: r.created_at.getTime(),
        retiredAt: r.retired_at ? r.retired_at.getTime() : null,
      })
    }
    this.keys = keys
    this.loadedAt = this.clock()
  }

  private reload(): Promise<void> {
    this.loading ??= this.load().finally(() => (this.loading = undefined))
    return this.loading
  }

  /** Creates a key, retiring the ones before it. */
  async rotate(): Promise<void> {
    const { publicKey, privateKey } = await generateKeyPair(ALG, { extractable: true })
    const kid = randomBytes(12).toString('base64url')
    const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: ALG, use: 'sig' }
    const sealed = seal(this.pepper, JSON.stringify(await exportJWK(privateKey)))
    const now = new Date(this.clock())
    await this.sql.begin(async (tx) => {
      await tx`UPDATE oauth_signing_keys SET retired_at = ${now} WHERE retired_at IS NULL`
      await tx`INSERT INTO oauth_signing_keys (kid, public_jwk, private_jwk_enc, created_at) VALUES (${kid}, ${tx.json(publicJwk as never)}, ${sealed}, ${now})`
    })
    await this.load()
  }

  /** The key that signs now, replaced first when it is older than the rotation age. */
  private async current(): Promise<LoadedKey> {
    if (this.keys.length === 0 || this.clock() - this.loadedAt > 60_000) await this.reload()
    const k = this.keys.find((x) => x.retiredAt === null)
    if (k && this.clock() - k.createdAt < this.opts.rotateMs) return k
    await this.rotate()
    return this.keys[0]
  }

  async sign(payload: JWTPayload, typ: string): Promise<string> {
    const k = await this.current()
    return new SignJWT(payload).setProtectedHeader({ alg: ALG, kid: k.kid, typ }).sign(k.privateKey)
  }

  /** The public key of `kid`, or undefined (reloading once a second at most for an unknown one). */
  async publicKey(kid: string | undefined): Promise<CryptoKey | undefined> {
    if (typeof kid !== 'string') return undefined
    let k = this.keys.find((x) => x.kid === kid)
    if (!k && this.clock() - this.loadedAt > 1_000) {
      await this.reload()
      k = this.keys.find((x) => x.kid === kid)
    }
    if (k && k.retiredAt !== null && this.clock() - k.retiredAt > this.opts.graceMs) return undefined
    return k?.publicKey
  }

  /** The published key set. */
  async jwks(): Promise<{ keys: JWK[] }> {
    await this.current()
    return { keys: this.keys.map((k) => k.publicJwk) }
  }
}
