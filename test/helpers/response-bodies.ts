// What whole response bodies are compared with (bare routes: orders, products): the fields a
// test cannot know in advance, matched by their form, and the error naming one field.

export const CUID = /^[a-z][a-z0-9]{23}$/;
export const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** The fields of a record just created: a cuid id, an ISO creation time, and no update since. */
export const justCreated = (body: { createdAt: unknown }) => ({
  id: expect.stringMatching(CUID),
  createdAt: expect.stringMatching(ISO),
  updatedAt: body.createdAt,
});

/** A bare route's 400 body whose errors name the field at `path` (among others). */
export const fieldError = (path: string) => ({
  message: expect.any(String),
  errors: expect.arrayContaining([expect.objectContaining({ path })]),
});
