import * as z from '../zod.ts';
import { byId, type RouteContracts } from '../openapi/contract.ts';
import { EXAMPLE_IDS, example } from '../openapi/examples.ts';
import { exportStatuses } from './export-repository.ts';
import { exportIdParams } from './schemas.ts';

// The OpenAPI contracts of the account-export routes (infra/openapi.ts alone imports this file, so no
// function bundle builds them): the schemas the document names, and what it says of each route.

const exportCreated = z
  .object({ exportId: z.string().check(z.describe('The id to ask GET /me/export/{exportId} about')) })
  .check(example({ exportId: EXAMPLE_IDS.export }));

const exportState = z
  .object({
    status: z
      .enum(exportStatuses)
      .check(
        z.describe(
          '`pending`: waiting to be built; `building`: being built (a build cut short is taken again); ' +
            '`ready`: the ZIP is at `url`; `failed`: it could not be built (ask for a new one)',
        ),
      ),
    url: z
      .optional(z.string())
      .check(
        z.describe('When ready: a presigned GET of the ZIP, valid while the export lives (a day from the request)'),
      ),
  })
  .check(
    example({
      status: 'ready',
      url: `https://files.example.com/exports/${EXAMPLE_IDS.user}/${EXAMPLE_IDS.export}.zip?X-Amz-Signature=…`,
    }),
  );

export const contracts: RouteContracts = {
  'create-export': {
    summary: "Ask for a ZIP of everything of the signed-in user's",
    description:
      'The ZIP is built in the background: every chat with every message of its tree as JSON (citations and ' +
      'feedback included) and its active branch as Markdown, the file records and the original PDFs still ' +
      'stored, and the orders. Poll GET /me/export/{exportId} until it is ready; the export is deleted a day later.',
    responses: { 202: exportCreated },
    errors: [401],
  },
  'get-export': {
    summary: 'The state of an export, and a URL of its ZIP once ready',
    ...byId(exportIdParams),
    responses: { 200: exportState },
  },
};
