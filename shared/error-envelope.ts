import { z } from 'zod';

/**
 * The one error envelope of every non-2xx answer (`ApiError.toBody` in `shared/errors.ts`), as a
 * schema: the session API's SDK types and the OpenAPI documents describe errors with it. This
 * module imports nothing but zod: the SDK build compiles it.
 */
export const ApiErrorBody = z.strictObject({
  error: z.strictObject({
    type: z.string(),
    code: z.string(),
    message: z.string(),
    param: z.string().optional(),
    details: z.unknown().optional(),
    request_id: z.string(),
  }),
});
export type ApiErrorBody = z.infer<typeof ApiErrorBody>;
