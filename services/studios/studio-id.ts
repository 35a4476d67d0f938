import { z } from 'zod';

/** Studio ids: a letter or digit, then letters, digits, "_" or "-", 64 characters at most. */
export const STUDIO_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

export const studioId = z.string().regex(STUDIO_ID_PATTERN, 'letters, digits, "_" or "-", at most 64');
