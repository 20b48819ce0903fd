import { z } from 'zod';
import { MicroUsdc } from '../platform/money.js';

// Shared with the payments routes, so it lives with the other HTTP schemas.
export { OwnerSlugParams } from '../platform/http-schemas.js';

export const ManifestSchema = z
  .object({
    owner: z.string(),
    slug: z.string(),
    channel: z.string().meta({ description: '<owner>/<slug>' }),
    status: z
      .enum(['published', 'retired'])
      .meta({ description: '`retired`: no longer sold; holders still fetch what they own' }),
    version: z.string().meta({ description: 'X.Y.Z, the latest release whose scan passed' }),
    artifact_sha256: z.string(),
    published_at: z.iso.datetime(),
    price_micro: MicroUsdc,
    update_price_micro: MicroUsdc.meta({ description: '`0` means updates are included' }),
    resource_endpoint: z.string().meta({ description: 'GET /api/r/{owner}/{slug}: buy or fetch' }),
    version_url: z.string().meta({ description: 'GET /api/v/{owner}/{slug}: version status' }),
    computed: z
      .record(z.string(), z.unknown())
      .meta({ description: 'What repo402 measured at release time (see docs/ANALYSIS.md), with `scan`' }),
    self_reported: z.object({ description: z.string(), trigger_hint: z.string() }),
  })
  .meta({ id: 'Manifest', description: 'Computed and self-reported fields in separate namespaces' });
