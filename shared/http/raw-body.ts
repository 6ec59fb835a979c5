import type { APIGatewayProxyEvent } from 'aws-lambda';
import { PayloadTooLargeError } from './errors.ts';

/**
 * A request's body as the bytes sent (a signed webhook is verified on exactly those), within
 * `limitBytes` (a 413 beyond). For routes without a JSON body schema, which the layer does not parse.
 */
export function rawBodyOf(event: APIGatewayProxyEvent, limitBytes: number): Buffer {
  const body = Buffer.from(event.body ?? '', event.isBase64Encoded ? 'base64' : 'utf8');
  if (body.length > limitBytes) throw new PayloadTooLargeError(limitBytes);
  return body;
}
