/**
 * The subject distinguished name of an X.509 certificate as the string Kafka's principal mapping
 * sees: Java's X500Principal.getName() (RFC 2253 form), built from the certificate's DER bytes so
 * that order, multi-valued RDNs and value types are exactly what the certificate says.
 *
 * Java's rules, which this follows: RDNs are printed last first (the reverse of their order in the
 * certificate), separated by ','; the attributes of a multi-valued RDN are joined with '+' in their
 * encoded order. Only CN, C, L, ST, O, OU, STREET, DC and UID get a keyword; any other attribute
 * (emailAddress, serialNumber, ...) is printed as its dotted OID with '#' and the hex of its whole
 * DER encoding. So is a value that is not a directory string (PrintableString, T61String,
 * IA5String, GeneralString, BMPString, UTF8String). A string value's bytes are read as UTF-8; the
 * characters , = + < > # ; " \ are escaped with '\', and so are leading and trailing spaces.
 *
 * Invariant: a certificate that is not valid DER throws; nothing here trusts lengths without
 * checking them against the buffer.
 */

const TAG_SEQUENCE = 0x30;
const TAG_SET = 0x31;
const TAG_OID = 0x06;
const DIRECTORY_STRING_TAGS = new Set([0x13 /* Printable */, 0x14 /* T61 */, 0x16 /* IA5 */, 0x1b /* General */, 0x1e /* BMP */, 0x0c /* UTF8 */]);

/** The keywords Java prints in RFC 2253 names (AVAKeyword entries marked RFC 2253 compliant). */
const RFC2253_KEYWORDS: Record<string, string> = {
  '2.5.4.3': 'CN',
  '2.5.4.6': 'C',
  '2.5.4.7': 'L',
  '2.5.4.8': 'ST',
  '2.5.4.10': 'O',
  '2.5.4.11': 'OU',
  '2.5.4.9': 'STREET',
  '0.9.2342.19200300.100.1.25': 'DC',
  '0.9.2342.19200300.100.1.1': 'UID',
};

const ESCAPEES = ',=+<>#;"\\';

interface Tlv {
  tag: number;
  /** Start of the whole encoding (tag byte). */
  start: number;
  /** Start of the contents. */
  contentStart: number;
  /** End of the contents (exclusive) = end of the encoding. */
  end: number;
}

function readTlv(buf: Buffer, pos: number, limit: number): Tlv {
  if (pos + 2 > limit) throw new Error('truncated DER');
  const tag = buf[pos];
  if ((tag & 0x1f) === 0x1f) throw new Error('multi-byte DER tags are not expected in a certificate name');
  let len = buf[pos + 1];
  let p = pos + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4 || p + n > limit) throw new Error('bad DER length');
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[p + i];
    p += n;
  }
  if (p + len > limit) throw new Error('DER length past the end');
  return { tag, start: pos, contentStart: p, end: p + len };
}

function children(buf: Buffer, parent: Tlv): Tlv[] {
  const out: Tlv[] = [];
  let p = parent.contentStart;
  while (p < parent.end) {
    const t = readTlv(buf, p, parent.end);
    out.push(t);
    p = t.end;
  }
  return out;
}

function expect(t: Tlv, tag: number, what: string): Tlv {
  if (t.tag !== tag) throw new Error(`expected ${what} (tag 0x${tag.toString(16)}), found tag 0x${t.tag.toString(16)}`);
  return t;
}

function decodeOid(bytes: Buffer): string {
  const parts: number[] = [];
  let value = 0;
  for (let i = 0; i < bytes.length; i++) {
    value = value * 128 + (bytes[i] & 0x7f);
    if ((bytes[i] & 0x80) === 0) {
      if (parts.length === 0) {
        const first = value < 40 ? 0 : value < 80 ? 1 : 2;
        parts.push(first, value - first * 40);
      } else {
        parts.push(value);
      }
      value = 0;
    }
  }
  return parts.join('.');
}

function escapeValue(s: string): string {
  let escaped = '';
  for (const c of s) escaped += ESCAPEES.includes(c) ? '\\' + c : c;
  const chars = [...escaped];
  let lead = 0;
  while (lead < chars.length && (chars[lead] === ' ' || chars[lead] === '\r')) lead++;
  let trail = chars.length - 1;
  while (trail >= 0 && (chars[trail] === ' ' || chars[trail] === '\r')) trail--;
  let out = '';
  chars.forEach((c, i) => {
    if (i < lead || i > trail) out += '\\';
    out += c;
  });
  return out;
}

function formatAva(buf: Buffer, ava: Tlv): string {
  const [type, value] = children(buf, expect(ava, TAG_SEQUENCE, 'AttributeTypeAndValue'));
  if (!type || !value) throw new Error('AttributeTypeAndValue needs a type and a value');
  const oid = decodeOid(buf.subarray(expect(type, TAG_OID, 'attribute type').contentStart, type.end));
  const keyword = RFC2253_KEYWORDS[oid] ?? oid;
  if (keyword === oid || !DIRECTORY_STRING_TAGS.has(value.tag)) {
    return `${keyword}=#${buf.subarray(value.start, value.end).toString('hex')}`;
  }
  return `${keyword}=${escapeValue(buf.subarray(value.contentStart, value.end).toString('utf8'))}`;
}

/** A DER Name (SEQUENCE OF RelativeDistinguishedName) in Java's RFC 2253 form. */
export function rfc2253NameFromDer(buf: Buffer, name: Tlv = readTlv(buf, 0, buf.length)): string {
  const rdns = children(buf, expect(name, TAG_SEQUENCE, 'Name'));
  return rdns
    .reverse()
    .map((rdn) => children(buf, expect(rdn, TAG_SET, 'RelativeDistinguishedName')).map((ava) => formatAva(buf, ava)).join('+'))
    .join(',');
}

/** The subject of a DER certificate (X509Certificate.raw) in Java's RFC 2253 form. */
export function subjectDistinguishedName(certificateDer: Buffer): string {
  const cert = expect(readTlv(certificateDer, 0, certificateDer.length), TAG_SEQUENCE, 'Certificate');
  const tbs = expect(children(certificateDer, cert)[0], TAG_SEQUENCE, 'TBSCertificate');
  const fields = children(certificateDer, tbs);
  // [0] version (optional), serialNumber, signature, issuer, validity, subject, ...
  const offset = fields[0]?.tag === 0xa0 ? 1 : 0;
  const subject = fields[offset + 4];
  if (!subject) throw new Error('certificate has no subject');
  return rfc2253NameFromDer(certificateDer, subject);
}
