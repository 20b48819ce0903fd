import net from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends bytes exactly as given (malformed request lines, bad headers) and reads the response until
 * the server closes the connection. fetch cannot send most of what these tests need.
 */
export function rawRequest(port: number, bytes: string | Buffer, timeoutMs = 5000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete response within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      const parsed = tryParse(Buffer.concat(chunks));
      if (parsed) {
        clearTimeout(timer);
        socket.destroy();
        resolve(parsed);
      }
    });
    socket.on('error', (error) => {
      clearTimeout(timer);
      // The server may answer and close before it has read everything we sent (oversized bodies).
      const parsed = tryParse(Buffer.concat(chunks));
      if (parsed) resolve(parsed);
      else reject(error);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      const parsed = tryParse(Buffer.concat(chunks));
      if (parsed) resolve(parsed);
      else
        reject(
          new Error(`connection closed without a complete response: ${Buffer.concat(chunks).toString()}`),
        );
    });
    socket.write(bytes);
  });
}

function tryParse(data: Buffer): RawResponse | undefined {
  const text = data.toString('utf8');
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const body = text.slice(end + 4);
  const length = Number(headers['content-length'] ?? Number.NaN);
  if (Number.isFinite(length) && Buffer.byteLength(body) < length) return undefined;
  if (!Number.isFinite(length) && headers['transfer-encoding'] === 'chunked') {
    if (!body.endsWith('0\r\n\r\n')) return undefined;
    return { status: Number(statusLine!.split(' ')[1]), headers, body: dechunk(body) };
  }
  return { status: Number(statusLine!.split(' ')[1]), headers, body };
}

function dechunk(body: string): string {
  let out = '';
  let rest = body;
  for (;;) {
    const lineEnd = rest.indexOf('\r\n');
    const size = Number.parseInt(rest.slice(0, lineEnd), 16);
    if (!size) return out;
    out += rest.slice(lineEnd + 2, lineEnd + 2 + size);
    rest = rest.slice(lineEnd + 2 + size + 2);
  }
}
