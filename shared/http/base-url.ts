import type { APIGatewayProxyEvent } from 'aws-lambda';
import type { HttpRouteSettings } from './route.ts';

// The API's base URL (ending in /api/v1 on the stack's own domain) as the client reached it, for
// links the API hands out: the domain API Gateway names (or, locally, the Host header), the
// scheme it was reached by, and the path before the route's own part: the stage and any base path
// of a custom domain.

const HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

export function requestBaseUrl(event: APIGatewayProxyEvent, route: Pick<HttpRouteSettings, 'path'>): string {
  const headers = Object.fromEntries(Object.entries(event.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  const host = [event.requestContext.domainName, headers.host].find((h): h is string => !!h && HOST.test(h));
  if (!host) throw new Error('The request names no host');
  const scheme = headers['x-forwarded-proto']?.split(',')[0]?.trim() === 'https' ? 'https' : 'http';
  // requestContext.path is the whole path (/api/v1/chat/abc/share): drop the route's segments.
  const routeSegments = route.path.split('/').filter(Boolean).length;
  const segments = (event.requestContext.path ?? '').split('/').filter(Boolean);
  const prefix = segments.slice(0, Math.max(0, segments.length - routeSegments)).join('/');
  return `${scheme}://${host}${prefix ? `/${prefix}` : ''}`;
}
