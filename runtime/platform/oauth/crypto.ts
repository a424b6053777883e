/**
 * Small cryptographic helpers of the authorization server: random bearer values, their SHA-256 (the only form
 * stored), scrypt password hashes, and the encryption of signing keys at rest.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto'

/** A random bearer value: 32 bytes, Base64URL (43 characters). */
export function randomToken(): string {
  return randomBytes(32).toString('base64url')
}

export function sha256(value: string): Buffer {
  return createHash('sha256').update(value).digest()
}

/** `BASE64URL(SHA256(verifier))`: the S256 PKCE challenge of a verifier. */
export function s256(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url')
}

/** Constant-time comparison of two strings (false when lengths differ). */
export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

const SCRYPT: ScryptOptions = { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 }

function scryptAsync(password: string, salt: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => scrypt(password.normalize('NFKC'), salt, 32, SCRYPT, (e, k) => (e ? reject(e) : resolve(k))))
}

/** `scrypt$N$r$p$salt$hash` (Base64URL). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16)
  const key = await scryptAsync(password, salt)
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64url')}$${key.toString('base64url')}`
}

/** A hash no password matches, verified when there is no user, so an unknown e-mail takes as long as a wrong password. */
const DUMMY = `scrypt$16384$8$1$${Buffer.alloc(16).toString('base64url')}$${Buffer.alloc(32).toString('base64url')}`

export async function verifyPassword(password: string, stored: string | null | undefined): Promise<boolean> {
  const parts = (stored ?? DUMMY).split('$')
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false
  const key = await scryptAsync(password, Buffer.from(parts[4], 'base64url'))
  const expected = Buffer.from(parts[5], 'base64url')
  return stored !== null && stored !== undefined && expected.length === key.length && timingSafeEqual(key, expected)
}

/** A one-time password for `orgscan users create`: 24 characters of an unambiguous 32-letter alphabet (120 bits). */
export function newPassword(): string {
  const alphabet = 'abcdefghijkmnpqrstuvwxyz23456789'
  return [...randomBytes(24)].map((b) => alphabet[b & 31]).join('')
}

/** AES-256-GCM with a key derived from the pepper, for private signing keys at rest. */
function atRestKey(pepper: string): Buffer {
  return createHmac('sha256', pepper).update('orgscan oauth signing keys').digest()
}

export function seal(pepper: string, plaintext: string): Buffer {
  const iv = randomBytes(12)
  const c = createCipheriv('aes-256-gcm', atRestKey(pepper), iv)
  const body = Buffer.concat([c.update(plaintext, 'utf8'), c.final()])
  return Buffer.concat([iv, c.getAuthTag(), body])
}

export function unseal(pepper: string, sealed: Buffer): string {
  const d = createDecipheriv('aes-256-gcm', atRestKey(pepper), sealed.subarray(0, 12))
  d.setAuthTag(sealed.subarray(12, 28))
  return Buffer.concat([d.update(sealed.subarray(28)), d.final()]).toString('utf8')
}
