import createClient from 'openapi-fetch';
import type { paths } from './generated/gateway.ts';
import { consoleFetch } from './http.ts';

/**
 * The gateway's `/v1` API, typed from its OpenAPI document (generated from the actions' zod
 * schemas at build time: `npm run build:console`). Calls carry the console's session.
 */
export const gateway = createClient<paths>({ baseUrl: window.location.origin, fetch: consoleFetch });
