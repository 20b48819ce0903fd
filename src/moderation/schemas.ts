import { z } from 'zod';
import { multiLineText, singleLineText } from '../platform/text-fields.js';

export const REPORT_CATEGORIES = ['malware', 'secret_exposed', 'copyright', 'other'] as const;
export type ReportCategory = (typeof REPORT_CATEGORIES)[number];

/** A report's text: enough for a paragraph and a few links, never a dump. */
export const REPORT_TEXT_MAX_LENGTH = 4000;

export const ReportRequestSchema = z
  .strictObject({
    listing: singleLineText()
      .min(1)
      .max(200)
      .meta({
        description: 'The listing reported: `owner/slug`, or its id (uuid)',
        examples: ['acme/tools'],
      }),
    version: singleLineText()
      .max(32)
      .optional()
      .meta({
        description: 'The release reported, `X.Y.Z`, when the report is about one',
        examples: ['1.2.0'],
      }),
    category: z.enum(REPORT_CATEGORIES).meta({
      description:
        '`malware` (the code harms who runs it), `secret_exposed` (it carries a secret), `copyright` (it is not the seller’s to sell), `other`',
    }),
    text: multiLineText()
      .trim()
      .min(1)
      .max(REPORT_TEXT_MAX_LENGTH)
      .meta({ description: 'What is wrong and where, for the operator to check' }),
  })
  .meta({ id: 'ReportRequest' });

export const ReportReceiptSchema = z
  .object({
    id: z.uuid(),
    listing: z.string().meta({ description: '`owner/slug`' }),
    version: z.string().optional(),
    category: z.enum(REPORT_CATEGORIES),
    received_at: z.iso.datetime(),
  })
  .meta({
    id: 'ReportReceipt',
    description: 'The report as recorded; the operator reviews it and the listing’s creator is told of it',
  });

export type ReportReceipt = z.infer<typeof ReportReceiptSchema>;
