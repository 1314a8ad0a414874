/**
 * Request and response headers (message/RequestHeader.json, ResponseHeader.json), hand-written
 * because the header version is not on the wire: it follows from the API key and version.
 *
 *   request header v0: apiKey int16, apiVersion int16, correlationId int32   (ControlledShutdown v0 only)
 *   request header v1: + clientId (nullable string, int16 length: never compact, even in v2)
 *   request header v2: + tagged fields                                       (flexible API versions)
 *   response header v0: correlationId int32; v1: + tagged fields             (flexible versions,
 *                                                                             except ApiVersions: always v0)
 *
 * The broker must be able to read the header of any request, including API keys and versions it
 * does not know (KIP-511: a client sends ApiVersions at its newest version before it knows ours):
 * an unknown API key is read as header v1; a version above our maximum of a known API is read
 * with the header of its flexibility (an API flexible from version N stays flexible above it).
 */
import { apiByKey, requestHeaderVersion } from './generated';
import { TaggedField, readTaggedFields, writeTaggedFields } from './primitives/codec-support';
import { Reader } from './primitives/reader';
import { Writer } from './primitives/writer';

export interface RequestHeader {
  apiKey: number;
  apiVersion: number;
  correlationId: number;
  /** null when the client sent a null client id; '' in header v0, which has none. */
  clientId: string | null;
  /** 0, 1 or 2, as derived from apiKey/apiVersion. */
  headerVersion: number;
  _unknownTaggedFields?: TaggedField[];
}

export interface ResponseHeader {
  correlationId: number;
  _unknownTaggedFields?: TaggedField[];
}

/** The request header version to read for a request, including unknown keys and newer versions. */
export function requestHeaderVersionToRead(apiKey: number, apiVersion: number): number {
  if (apiByKey(apiKey) === undefined) return 1;
  return requestHeaderVersion(apiKey, apiVersion);
}

/** Reads a request header; leaves `r` at the start of the request body. */
export function readRequestHeader(r: Reader): RequestHeader {
  const apiKey = r.int16();
  const apiVersion = r.int16();
  const correlationId = r.int32();
  const headerVersion = requestHeaderVersionToRead(apiKey, apiVersion);
  const clientId = headerVersion >= 1 ? r.nullableString() : '';
  const h: RequestHeader = { apiKey, apiVersion, correlationId, clientId, headerVersion };
  if (headerVersion >= 2) {
    const unk = readTaggedFields(r);
    if (unk !== undefined) h._unknownTaggedFields = unk;
  }
  return h;
}

/**
 * Writes a request header (a client's side: tests, the inter-broker client). The header version
 * defaults to the one the API key and version call for.
 */
export function writeRequestHeader(
  w: Writer,
  apiKey: number,
  apiVersion: number,
  correlationId: number,
  clientId: string | null,
  headerVersion: number = requestHeaderVersion(apiKey, apiVersion),
  unknownTaggedFields?: readonly TaggedField[],
): void {
  if (headerVersion < 0 || headerVersion > 2) throw new RangeError(`no request header version ${headerVersion}`);
  w.int16(apiKey);
  w.int16(apiVersion);
  w.int32(correlationId);
  if (headerVersion >= 1) w.nullableString(clientId);
  if (headerVersion >= 2) writeTaggedFields(w, unknownTaggedFields);
}

/** Writes a response header: v0 = correlation id, v1 = correlation id + an (empty) tagged-field section. */
export function writeResponseHeader(w: Writer, headerVersion: number, correlationId: number): void {
  if (headerVersion !== 0 && headerVersion !== 1) throw new RangeError(`no response header version ${headerVersion}`);
  w.int32(correlationId);
  if (headerVersion === 1) w.uint8(0);
}

export function readResponseHeader(r: Reader, headerVersion: number): ResponseHeader {
  if (headerVersion !== 0 && headerVersion !== 1) throw new RangeError(`no response header version ${headerVersion}`);
  const h: ResponseHeader = { correlationId: r.int32() };
  if (headerVersion === 1) {
    const unk = readTaggedFields(r);
    if (unk !== undefined) h._unknownTaggedFields = unk;
  }
  return h;
}
