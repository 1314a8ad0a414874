/**
 * Key stores and trust stores, as Kafka's DefaultSslEngineFactory reads them, turned into what
 * node:tls takes: a private key with its certificate chain (the key store), and the certificates to
 * trust (the trust store).
 *
 * Formats:
 * - PEM: `ssl.keystore.location` naming a file with the private key and the certificate chain, or
 *   the inline `ssl.keystore.key` + `ssl.keystore.certificate.chain`; the key may be encrypted
 *   (PKCS#8, `ssl.key.password`). Trust stores: `ssl.truststore.location` or the inline
 *   `ssl.truststore.certificates`. PEM entries are found as Kafka's PemParser finds them (text
 *   around them is ignored, the base64 may be on one line).
 * - PKCS12 (`ssl.keystore.password` / `ssl.truststore.password`), read with node-forge: the key and
 *   the chain that goes with it, and for a trust store every certificate in it, which become the
 *   trust anchors (node's own `pfx` option cannot do that).
 * - JKS: a file that is in fact PKCS12 (what keytool writes since Java 9 unless told otherwise) is
 *   read as PKCS12; a real JKS or JCEKS file (magic 0xFEEDFEED / 0xCECECECE) cannot be read by
 *   krill and stops startup, with the keytool command that converts it.
 *
 * Invariants: the combination rules and their messages are Kafka's (createKeystore /
 * createTruststore); every failure is a ConfigException naming the key it is about (listener
 * prefixed when the value came from `listener.name.<l>.`), thrown while the broker starts; a store
 * that loads has at least one certificate, and a key store's key matches its first certificate.
 */
import * as fs from 'node:fs';
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import type Forge from 'node-forge';
import { ConfigException } from '../../../config/config-types';

/** The ssl.* values of one listener (or of the client side), with the key each came from. */
export interface StoreConfig {
  value(key: string): string | null;
  /** The config key the value of `key` comes from (`listener.name.<l>.<key>` or `key`). */
  source(key: string): string;
  /** Where these settings apply, for messages: "listener SSL", "inter-broker client". */
  readonly context: string;
}

export interface KeyMaterial {
  key: KeyObject;
  /** The certificate of `key` first, then its issuers as the store lists them. */
  chain: X509Certificate[];
}

const PEM = 'PEM';
const JKS_MAGIC = 0xfeedfeed;
const JCEKS_MAGIC = 0xcececece;

function fail(c: StoreConfig, key: string, message: string): never {
  throw new ConfigException(`${c.source(key)} (${c.context}): ${message}`, c.source(key));
}

function causeOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

// ---------------------------------------------------------------------------------------------
// PEM (Kafka's PemParser: BEGIN/END lines, optional "Name: value" headers, base64 with any spacing)

interface PemEntry {
  label: string;
  headers: string[];
  der: Buffer;
}

function pemPattern(name: string): RegExp {
  const n = name.replace(/ /g, String.raw`\s+`);
  return new RegExp(
    String.raw`-+BEGIN\s*(.*` + n + String.raw`)[^-]*-+\s+((?:\s*[^\r\n]*:[^\r\n]*[\r\n]+)*)([a-zA-Z0-9/+=\s]*)-+END\s*.*` + n + String.raw`[^-]*-+\s+`,
    'g',
  );
}

function pemEntries(pem: string, name: string): PemEntry[] {
  const out: PemEntry[] = [];
  for (const m of (pem + '\n').matchAll(pemPattern(name))) {
    const headers = m[2].split(/[\r\n]+/).map((h) => h.trim()).filter((h) => h !== '');
    out.push({ label: m[1].trim().replace(/\s+/g, ' '), headers, der: Buffer.from(m[3].replace(/\s/g, ''), 'base64') });
  }
  if (out.length === 0) throw new Error(`No matching ${name} entries in PEM file`);
  return out;
}

function certificates(pem: string): X509Certificate[] {
  return pemEntries(pem, 'CERTIFICATE').map((e) => new X509Certificate(e.der));
}

function privateKey(pem: string, password: string | null): KeyObject {
  let entries: PemEntry[];
  try {
    entries = pemEntries(pem, 'PRIVATE KEY');
  } catch {
    throw new Error('Private key not provided');
  }
  if (entries.length !== 1) throw new Error(`Expected one private key, but found ${entries.length}`);
  const e = entries[0];
  const encrypted = e.label.includes('ENCRYPTED') || e.headers.some((h) => /^Proc-Type:.*ENCRYPTED/i.test(h));
  if (encrypted && password === null) throw new Error('the private key is encrypted and no key password (ssl.key.password) is set');
  const body = e.der.toString('base64').replace(/.{1,64}/g, '$&\n');
  const text = `-----BEGIN ${e.label}-----\n${e.headers.length ? e.headers.join('\n') + '\n\n' : ''}${body}-----END ${e.label}-----\n`;
  try {
    return createPrivateKey(password === null ? { key: text } : { key: text, passphrase: password });
  } catch (err) {
    const msg = causeOf(err);
    if (encrypted && password !== null) throw new Error(`the private key cannot be decrypted with the key password (ssl.key.password): ${msg}`);
    throw new Error(`Private key could not be loaded: ${msg}`);
  }
}

function keyMaterial(key: KeyObject, certs: X509Certificate[]): KeyMaterial {
  const leafIndex = certs.findIndex((c) => c.checkPrivateKey(key));
  if (leafIndex < 0) throw new Error('no certificate in the chain belongs to the private key');
  const leaf = certs[leafIndex];
  return { key, chain: [leaf, ...certs.filter((_, i) => i !== leafIndex)] };
}

// ---------------------------------------------------------------------------------------------
// PKCS12

interface Pkcs12Contents {
  keys: { key: KeyObject; localKeyId: string | null }[];
  certs: { cert: X509Certificate; localKeyId: string | null }[];
}

/**
 * node-forge, loaded on first use: it costs ~50 ms of start-up, and only PKCS12 / JKS stores need it
 * (a broker without them never loads it).
 */
function loadForge(): typeof Forge {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('node-forge') as typeof Forge;
}

function readPkcs12(der: Buffer, password: string | null): Pkcs12Contents {
  const forge = loadForge();
  const asn1 = forge.asn1.fromDer(forge.util.createBuffer(der.toString('binary')));
  // No password: integrity is not checked (as Java loads a trust store without its password).
  if (password === null && Array.isArray(asn1.value) && asn1.value.length > 2) asn1.value.length = 2;
  // Parse nothing into forge's own key and certificate objects (it knows only RSA): every bag keeps its
  // ASN.1, so any key type reaches node's crypto and certificates keep their exact bytes.
  const pki = forge.pki as unknown as Record<string, unknown>;
  const savedCert = pki.certificateFromAsn1;
  const savedKey = pki.privateKeyFromAsn1;
  const refuse = (): never => {
    throw new Error('kept as ASN.1');
  };
  pki.certificateFromAsn1 = refuse;
  pki.privateKeyFromAsn1 = refuse;
  let p12: Forge.pkcs12.Pkcs12Pfx;
  try {
    p12 = forge.pkcs12.pkcs12FromAsn1(asn1, false, password ?? '');
  } finally {
    pki.certificateFromAsn1 = savedCert;
    pki.privateKeyFromAsn1 = savedKey;
  }
  const toDer = (a: Forge.asn1.Asn1): Buffer => Buffer.from(forge.asn1.toDer(a).getBytes(), 'binary');
  const keyId = (bag: Forge.pkcs12.Bag): string | null => {
    const id = bag.attributes?.localKeyId?.[0];
    return typeof id === 'string' ? Buffer.from(id, 'binary').toString('hex') : null;
  };
  const out: Pkcs12Contents = { keys: [], certs: [] };
  for (const type of [forge.pki.oids.pkcs8ShroudedKeyBag, forge.pki.oids.keyBag]) {
    for (const bag of p12.getBags({ bagType: type })[type] ?? []) {
      if (!bag.asn1) continue;
      out.keys.push({ key: createPrivateKey({ key: toDer(bag.asn1), format: 'der', type: 'pkcs8' }), localKeyId: keyId(bag) });
    }
  }
  for (const bag of p12.getBags({ bagType: forge.pki.oids.certBag })[forge.pki.oids.certBag] ?? []) {
    if (!bag.asn1) continue;
    out.certs.push({ cert: new X509Certificate(toDer(bag.asn1)), localKeyId: keyId(bag) });
  }
  return out;
}

function pkcs12Failure(err: unknown, what: 'keystore' | 'truststore'): string {
  const msg = causeOf(err);
  if (/MAC could not be verified|Invalid password|wrong password|decrypt/i.test(msg)) return `${what} password was incorrect`;
  return msg;
}

/** Reads a file-based store of type JKS or PKCS12; returns the PKCS12 contents or fails naming the key. */
function loadFileStore(c: StoreConfig, store: 'keystore' | 'truststore', type: string, location: string, password: string | null): Pkcs12Contents {
  const locationKey = `ssl.${store}.location`;
  const typeKey = `ssl.${store}.type`;
  const prefix = `Failed to load SSL ${store} ${location} of type ${type}`;
  const upper = type.toUpperCase();
  if (upper !== 'PKCS12' && upper !== 'JKS') {
    fail(c, typeKey, `${prefix}: ${type} not found (krill reads PEM, PKCS12, and JKS files that are PKCS12)`);
  }
  let der: Buffer;
  try {
    der = fs.readFileSync(location);
  } catch (err) {
    fail(c, locationKey, `${prefix}: ${causeOf(err)}`);
  }
  const magic = der.length >= 4 ? der.readUInt32BE(0) : 0;
  if (magic === JKS_MAGIC || magic === JCEKS_MAGIC) {
    const kind = magic === JKS_MAGIC ? 'JKS' : 'JCEKS';
    fail(
      c,
      locationKey,
      `${prefix}: it is a Java ${kind} key store, which krill cannot read. Convert it to PKCS12 and set ${c.source(typeKey)}=PKCS12: ` +
        `keytool -importkeystore -srckeystore ${location} -srcstoretype ${kind} -destkeystore ${location}.p12 -deststoretype PKCS12`,
    );
  }
  if (der[0] !== 0x30) fail(c, locationKey, `${prefix}: not a PKCS12 file`);
  try {
    return readPkcs12(der, password);
  } catch (err) {
    const reason = pkcs12Failure(err, store);
    fail(c, reason.endsWith('password was incorrect') ? `ssl.${store}.password` : locationKey, `${prefix}: ${reason}`);
  }
}

// ---------------------------------------------------------------------------------------------
// The stores

/**
 * The key store of these settings (Kafka's createKeystore), or null when none is configured (a
 * client without a certificate). Throws ConfigException.
 */
export function loadKeyStore(c: StoreConfig): KeyMaterial | null {
  const type = c.value('ssl.keystore.type') ?? 'JKS';
  const location = c.value('ssl.keystore.location');
  const password = c.value('ssl.keystore.password');
  const keyPassword = c.value('ssl.key.password');
  const inlineKey = c.value('ssl.keystore.key');
  const inlineChain = c.value('ssl.keystore.certificate.chain');
  const isPem = type.toUpperCase() === PEM;
  if (inlineKey !== null) {
    if (!isPem) fail(c, 'ssl.keystore.type', `SSL private key can be specified only for PEM, but key store type is ${type}.`);
    if (inlineChain === null) fail(c, 'ssl.keystore.certificate.chain', 'SSL private key is specified, but certificate chain is not specified.');
    if (location !== null) fail(c, 'ssl.keystore.location', 'Both SSL key store location and separate private key are specified.');
    if (password !== null) fail(c, 'ssl.keystore.password', 'SSL key store password cannot be specified with PEM format, only key password may be specified.');
    try {
      return keyMaterial(privateKey(inlineKey, keyPassword), certificates(inlineChain));
    } catch (err) {
      fail(c, /key password/.test(causeOf(err)) ? 'ssl.key.password' : 'ssl.keystore.key', `Invalid PEM keystore configs: ${causeOf(err)}`);
    }
  }
  if (inlineChain !== null) fail(c, 'ssl.keystore.key', 'SSL certificate chain is specified, but private key is not specified');
  if (isPem && location !== null) {
    if (password !== null) fail(c, 'ssl.keystore.password', 'SSL key store password cannot be specified with PEM format, only key password may be specified');
    let text: string;
    try {
      text = fs.readFileSync(location, 'utf8');
    } catch (err) {
      fail(c, 'ssl.keystore.location', `Failed to load PEM SSL keystore ${location}: ${causeOf(err)}`);
    }
    try {
      return keyMaterial(privateKey(text, keyPassword), certificates(text));
    } catch (err) {
      fail(c, /key password/.test(causeOf(err)) ? 'ssl.key.password' : 'ssl.keystore.location', `Failed to load PEM SSL keystore ${location}: ${causeOf(err)}`);
    }
  }
  if (location === null && password !== null) fail(c, 'ssl.keystore.location', 'SSL key store is not specified, but key store password is specified.');
  if (location !== null && password === null) fail(c, 'ssl.keystore.password', 'SSL key store is specified, but key store password is not specified.');
  if (location === null) return null;
  const contents = loadFileStore(c, 'keystore', type, location, password!);
  const entry = contents.keys[0];
  if (!entry) fail(c, 'ssl.keystore.location', `SSL keystore ${location} holds no private key`);
  // The key's own chain: the certificates with its localKeyId, else all of them (keyMaterial finds the leaf).
  const own = entry.localKeyId === null ? [] : contents.certs.filter((x) => x.localKeyId === entry.localKeyId);
  const rest = contents.certs.filter((x) => !own.includes(x));
  try {
    return keyMaterial(entry.key, [...own, ...rest].map((x) => x.cert));
  } catch (err) {
    fail(c, 'ssl.keystore.location', `Failed to load SSL keystore ${location} of type ${type}: ${causeOf(err)}`);
  }
}

/**
 * The trusted certificates of these settings (Kafka's createTruststore), or null when no trust
 * store is configured (then the platform's default CAs are trusted, as Java's default trust store
 * is). Throws ConfigException.
 */
export function loadTrustStore(c: StoreConfig): X509Certificate[] | null {
  const type = c.value('ssl.truststore.type') ?? 'JKS';
  const location = c.value('ssl.truststore.location');
  const password = c.value('ssl.truststore.password');
  const inline = c.value('ssl.truststore.certificates');
  const isPem = type.toUpperCase() === PEM;
  if (inline !== null) {
    if (!isPem) fail(c, 'ssl.truststore.type', `SSL trust store certs can be specified only for PEM, but trust store type is ${type}.`);
    if (location !== null) fail(c, 'ssl.truststore.location', 'Both SSL trust store location and separate trust certificates are specified.');
    if (password !== null) fail(c, 'ssl.truststore.password', 'SSL trust store password cannot be specified for PEM format.');
    try {
      return certificates(inline);
    } catch (err) {
      fail(c, 'ssl.truststore.certificates', `Invalid PEM truststore configs: ${causeOf(err)}`);
    }
  }
  if (isPem && location !== null) {
    if (password !== null) fail(c, 'ssl.truststore.password', 'SSL trust store password cannot be specified for PEM format.');
    try {
      return certificates(fs.readFileSync(location, 'utf8'));
    } catch (err) {
      fail(c, 'ssl.truststore.location', `Failed to load PEM SSL keystore ${location}: ${causeOf(err)}`);
    }
  }
  if (location === null && password !== null) fail(c, 'ssl.truststore.location', 'SSL trust store is not specified, but trust store password is specified.');
  if (location === null) return null;
  const contents = loadFileStore(c, 'truststore', type, location, password);
  if (contents.certs.length === 0) fail(c, 'ssl.truststore.location', `SSL truststore ${location} holds no certificate`);
  return contents.certs.map((x) => x.cert);
}
