/**
 * Requests that Node's HTTP parser refuses before Koa sees them (headers or URL past the header size
 * limit, a malformed request line, headers that arrive too slowly) still answer with the contract's
 * error body and a request id, instead of Node's default bare status line with an empty body.
 */
import type net from 'node:net';
import type { Duplex } from 'node:stream';
import type { ErrorBody } from './error-handler';
import { newRequestId } from './request-id';
import { SECURITY_HEADERS } from './security-headers';

/** Node's own choice of status for each parser error (see `socketOnError` in Node's _http_server). */
function statusOf(code: string | undefined): { status: number; reason: string; message: string } {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        reason: 'Request Header Fields Too Large',
        message:
          'The request line and headers are larger than the server accepts (16 KiB in all); shorten the URL or the headers.',
      };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, reason: 'Request Timeout', message: 'The request did not arrive in time.' };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, reason: 'Payload Too Large', message: 'The chunk extensions are too large.' };
    default:
      return { status: 400, reason: 'Bad Request', message: 'The request is not valid HTTP.' };
  }
}

export function handleClientError(error: Error & { code?: string }, socket: Duplex): void {
  // As Node itself does: answer only on a socket that is still open and has not sent anything yet (a
  // keep-alive connection past its first response just closes), and never to a peer that reset it.
  if (error.code === 'ECONNRESET' || !socket.writable || (socket as net.Socket).bytesWritten !== 0) {
    socket.destroy();
    return;
  }
  const { status, reason, message } = statusOf(error.code);
  const requestId = newRequestId();
  const code = status === 413 ? 'payload_too_large' : 'invalid_request';
  const body: ErrorBody = { error: { code, message, request_id: requestId, details: [] } };
  const json = JSON.stringify(body);
  const headers = {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(json)),
    'X-Request-Id': requestId,
    ...SECURITY_HEADERS,
    Connection: 'close',
  };
  const head = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.end(`HTTP/1.1 ${status} ${reason}\r\n${head}\r\n${json}`);
}
