/**
 * The four SCRAM messages of RFC 5802 section 7, parsed and written exactly as Kafka's ScramMessages
 * does, for the server (scram-server.ts) and the client (scram-client.ts) mechanisms:
 *
 *   client-first  n,[a=authzid],[m=reserved,]n=saslname,r=client-nonce[,ext=value...]
 *   server-first  [m=reserved,]r=nonce,s=base64-salt,i=iterations[,ext=value...]
 *   client-final  c=base64-channel-binding,r=nonce[,ext=value...],p=base64-proof
 *   server-final  e=error | v=base64-server-signature[,ext=value...]
 *
 * Invariants (Kafka's patterns, a whole-message match or a ScramFormatError):
 * - only the gs2 header "n" is accepted (no channel binding: "y" and "p=" are format errors);
 * - names, values and nonces are 7-bit ASCII: a saslname escapes ',' as =2C and '=' as =3D and may
 *   contain '=' only in those escapes; nonces are printable and have no ',';
 * - base64 fields are padded standard base64;
 * - the "bare" parts the AuthMessage is made of are rebuilt from the parsed fields, as Kafka
 *   rebuilds them: client-first-message-bare = n=saslname,r=nonce[,extensions in the order sent]
 *   (a reserved m= field is dropped), client-final-message-without-proof = c=...,r=nonce (its
 *   extensions are dropped). The signatures therefore agree with Kafka's for every input.
 */

/** A SCRAM message that does not have the required form; `message` is Kafka's text (for the log). */
export class ScramFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ScramFormatError';
  }
}

// Kafka's character classes, with Java's `&&[^...]` intersections spelled out (0x2C ',', 0x3D '=').
const ALPHA = '[A-Za-z]+';
const VALUE_SAFE = '[\\x01-\\x2B\\x2D-\\x3C\\x3E-\\x7F]+';
const VALUE = '[\\x01-\\x2B\\x2D-\\x7F]+';
const PRINTABLE = '[\\x21-\\x2B\\x2D-\\x7E]+';
const SASLNAME = '(?:[\\x01-\\x2B\\x2D-\\x3C\\x3E-\\x7F]|=2C|=3D)+';
const BASE64_CHAR = '[a-zA-Z0-9/+]';
const BASE64 = `(?:${BASE64_CHAR}{4})*(?:${BASE64_CHAR}{3}=|${BASE64_CHAR}{2}==)?`;
const RESERVED = `(?:m=${VALUE},)?`;
const EXTENSIONS = `(?:,${ALPHA}=${VALUE})*`;

const CLIENT_FIRST = new RegExp(`^n,(?:a=(?<authzid>${SASLNAME}))?,${RESERVED}n=(?<saslname>${SASLNAME}),r=(?<nonce>${PRINTABLE})(?<extensions>${EXTENSIONS})$`);
const SERVER_FIRST = new RegExp(`^${RESERVED}r=(?<nonce>${PRINTABLE}),s=(?<salt>${BASE64}),i=(?<iterations>[0-9]+)${EXTENSIONS}$`);
const CLIENT_FINAL = new RegExp(`^c=(?<channel>${BASE64}),r=(?<nonce>${PRINTABLE})${EXTENSIONS},p=(?<proof>${BASE64})$`);
const SERVER_FINAL = new RegExp(`^(?:e=(?<error>${VALUE_SAFE}))$|^(?:v=(?<signature>${BASE64}))${EXTENSIONS}$`);

const INT32_MAX = 2147483647;

/** Kafka's ScramFormatter.saslName: '=' -> =3D, ',' -> =2C. */
export function saslName(username: string): string {
  return username.replace(/=/g, '=3D').replace(/,/g, '=2C');
}

/** Kafka's ScramFormatter.username: the inverse; throws ScramFormatError for a '=' outside the two escapes. */
export function usernameOf(name: string): string {
  const commas = name.replace(/=2C/g, ',');
  if (commas.replace(/=3D/g, '').includes('=')) throw new ScramFormatError(`Invalid username: ${name}`);
  return commas.replace(/=3D/g, '=');
}

/** Kafka's Utils.parseMap(s, "=", ","): insertion order kept, a repeated key keeps its first place and last value. */
function parseExtensions(s: string): Map<string, string> {
  const out = new Map<string, string>();
  if (s === '') return out;
  for (const kv of s.split(',')) {
    const i = kv.indexOf('=');
    out.set(kv.slice(0, i), kv.slice(i + 1));
  }
  return out;
}

export interface ClientFirstMessage {
  /** The authzid of the gs2 header ('' when absent). */
  authorizationId: string;
  /** The escaped user name as sent. */
  saslName: string;
  nonce: string;
  extensions: Map<string, string>;
}

export function parseClientFirst(bytes: Buffer): ClientFirstMessage {
  const message = bytes.toString('utf8');
  const m = CLIENT_FIRST.exec(message);
  if (!m) throw new ScramFormatError(`Invalid SCRAM client first message format: ${message}`);
  const g = m.groups!;
  const ext = g.extensions;
  return { authorizationId: g.authzid ?? '', saslName: g.saslname, nonce: g.nonce, extensions: parseExtensions(ext.startsWith(',') ? ext.slice(1) : '') };
}

export function clientFirstBare(m: ClientFirstMessage): string {
  const ext = [...m.extensions].map(([k, v]) => `${k}=${v}`).join(',');
  return ext === '' ? `n=${m.saslName},r=${m.nonce}` : `n=${m.saslName},r=${m.nonce},${ext}`;
}

/** gs2-header + client-first-message-bare. */
export function writeClientFirst(m: ClientFirstMessage): Buffer {
  return Buffer.from(`n,${m.authorizationId},${clientFirstBare(m)}`, 'utf8');
}

export interface ServerFirstMessage {
  /** The client's nonce followed by the server's. */
  nonce: string;
  salt: Buffer;
  iterations: number;
}

export function parseServerFirst(bytes: Buffer): ServerFirstMessage {
  const message = bytes.toString('utf8');
  const m = SERVER_FIRST.exec(message);
  if (!m) throw new ScramFormatError(`Invalid SCRAM server first message format: ${message}`);
  const g = m.groups!;
  // Java's Integer.parseInt: beyond int32 is a NumberFormatException.
  const iterations = Number(g.iterations);
  if (!Number.isSafeInteger(iterations) || iterations > INT32_MAX) throw new ScramFormatError('Invalid SCRAM server first message format: invalid iterations');
  if (iterations <= 0) throw new ScramFormatError(`Invalid SCRAM server first message format: invalid iterations ${iterations}`);
  return { nonce: g.nonce, salt: Buffer.from(g.salt, 'base64'), iterations };
}

/** The server-first-message as it goes on the wire (and into the AuthMessage). */
export function serverFirstText(m: ServerFirstMessage): string {
  return `r=${m.nonce},s=${m.salt.toString('base64')},i=${m.iterations}`;
}

export interface ClientFinalMessage {
  channelBinding: Buffer;
  nonce: string;
  proof: Buffer;
}

export function parseClientFinal(bytes: Buffer): ClientFinalMessage {
  const message = bytes.toString('utf8');
  const m = CLIENT_FINAL.exec(message);
  if (!m) throw new ScramFormatError(`Invalid SCRAM client final message format: ${message}`);
  const g = m.groups!;
  return { channelBinding: Buffer.from(g.channel, 'base64'), nonce: g.nonce, proof: Buffer.from(g.proof, 'base64') };
}

export function clientFinalWithoutProof(m: { channelBinding: Buffer; nonce: string }): string {
  return `c=${m.channelBinding.toString('base64')},r=${m.nonce}`;
}

export function writeClientFinal(m: ClientFinalMessage): Buffer {
  return Buffer.from(`${clientFinalWithoutProof(m)},p=${m.proof.toString('base64')}`, 'utf8');
}

export type ServerFinalMessage = { error: string; serverSignature: null } | { error: null; serverSignature: Buffer };

export function parseServerFinal(bytes: Buffer): ServerFinalMessage {
  const message = bytes.toString('utf8');
  const m = SERVER_FINAL.exec(message);
  if (!m) throw new ScramFormatError(`Invalid SCRAM server final message format: ${message}`);
  const g = m.groups!;
  if (g.error !== undefined) return { error: g.error, serverSignature: null };
  return { error: null, serverSignature: Buffer.from(g.signature, 'base64') };
}

export function writeServerFinal(serverSignature: Buffer): Buffer {
  return Buffer.from(`v=${serverSignature.toString('base64')}`, 'utf8');
}

/** AuthMessage := client-first-message-bare + "," + server-first-message + "," + client-final-message-without-proof. */
export function authMessage(first: ClientFirstMessage, serverFirst: ServerFirstMessage, final: { channelBinding: Buffer; nonce: string }): Buffer {
  return Buffer.from(`${clientFirstBare(first)},${serverFirstText(serverFirst)},${clientFinalWithoutProof(final)}`, 'utf8');
}
