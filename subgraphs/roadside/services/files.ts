import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/core';
import { AppError, badInput, notFound } from '../../platform/errors.ts';
import { ALLOWED_CONTENT_TYPES, FILE_TYPES, MAX_FILE_BYTES } from '../rules.ts';
import { ProviderFile, RescueMember, RescueRequest } from '../entities.ts';

export interface UploadInput {
  reqId?: string | null;
  memberId?: string | null;
  fileType: string;
  fileName: string;
  contentType: string;
  contentBase64: string;
}

export interface FileFilter {
  reqId?: string | null;
  memberId?: string | null;
  fileType?: string | null;
  from?: string | null;
  to?: string | null;
  limit?: number | null;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function parseFileType(value: string | null | undefined, field = 'fileType') {
  const t = typeof value === 'string' ? value.trim().toUpperCase().replaceAll(/[\s-]/g, '_') : '';
  if (!(FILE_TYPES as readonly string[]).includes(t)) throw badInput(`${field} must be one of ${FILE_TYPES.join(', ')}`, field);
  return t;
}

/** An instant from YYYY-MM-DD (start of that UTC day) or an ISO date-time. */
function parseInstant(value: string, field: string, endOfDay: boolean): Date {
  const day = /^\d{4}-\d{2}-\d{2}$/.test(value);
  const date = new Date(day ? `${value}T00:00:00.000Z` : value);
  if (Number.isNaN(date.getTime()) || !/^\d{4}-\d{2}-\d{2}/.test(value)) throw badInput(`${field} must be YYYY-MM-DD or an ISO 8601 date-time`, field);
  return day && endOfDay ? new Date(date.getTime() + 86400000 - 1) : date;
}

/** Files providers attach to rescues (photos, invoices, receipts), kept in the database. */
export class FileService {
  private readonly em: EntityManager;
  constructor(em: EntityManager) { this.em = em; }

  async upload(input: UploadInput): Promise<ProviderFile> {
    const contentType = typeof input.contentType === 'string' ? input.contentType.split(';')[0].trim().toLowerCase() : '';
    if (!contentType) throw badInput('contentType is required', 'contentType');
    if (!(ALLOWED_CONTENT_TYPES as readonly string[]).includes(contentType)) {
      throw new AppError('UNSUPPORTED_MEDIA_TYPE', `content type ${contentType} is not accepted; allowed: ${ALLOWED_CONTENT_TYPES.join(', ')}`, { field: 'contentType' });
    }
    const fileType = parseFileType(input.fileType);
    const fileName = typeof input.fileName === 'string' ? input.fileName.trim() : '';
    if (!fileName || fileName.length > 255 || /[/\\\0]/.test(fileName)) throw badInput('fileName is required: at most 255 characters, no path separators', 'fileName');
    const encoded = typeof input.contentBase64 === 'string' ? input.contentBase64.replaceAll(/\s/g, '') : '';
    if (!encoded || !BASE64.test(encoded)) throw badInput('content must be non-empty base64', 'content');
    if (encoded.length > Math.ceil(MAX_FILE_BYTES / 3) * 4 + 4) throw new AppError('PAYLOAD_TOO_LARGE', `files may be at most ${MAX_FILE_BYTES} bytes`, { field: 'content', limit: MAX_FILE_BYTES });
    const data = Buffer.from(encoded, 'base64');
    if (data.length > MAX_FILE_BYTES) throw new AppError('PAYLOAD_TOO_LARGE', `files may be at most ${MAX_FILE_BYTES} bytes`, { field: 'content', limit: MAX_FILE_BYTES });
    let memberId = input.memberId ?? null;
    if (memberId != null && (typeof memberId !== 'string' || !memberId.trim() || memberId.length > 128)) throw badInput('memberId must be a non-empty string', 'memberId');
    if (input.reqId != null) {
      const rescue = await this.em.findOne(RescueRequest, { reqId: input.reqId });
      if (!rescue) throw notFound('Rescue request', input.reqId);
      if (memberId == null && rescue.memberRef) memberId = (await this.em.findOne(RescueMember, { id: rescue.memberRef }))?.memberId ?? null;
    } else if (memberId == null) {
      throw badInput('a file belongs to a rescue (requestId) or a member (memberId)', 'requestId');
    }
    const file = this.em.create(ProviderFile, {
      contentId: crypto.randomUUID(), reqId: input.reqId ?? null, memberId, fileType, fileName, contentType,
      size: data.length, sha256: createHash('sha256').update(data).digest('hex'), data,
    } as never);
    await this.em.flush();
    return file;
  }

  /** Metadata of the caller's files matching every filter given, newest first. */
  async search(filter: FileFilter): Promise<ProviderFile[]> {
    const where: Record<string, unknown> = {};
    if (filter.reqId != null) where.reqId = filter.reqId;
    if (filter.memberId != null) where.memberId = filter.memberId;
    if (filter.fileType != null) where.fileType = parseFileType(filter.fileType);
    const createdAt: Record<string, Date> = {};
    if (filter.from != null) createdAt.$gte = parseInstant(filter.from, 'from', false);
    if (filter.to != null) createdAt.$lte = parseInstant(filter.to, 'to', true);
    if (createdAt.$gte && createdAt.$lte && createdAt.$gte > createdAt.$lte) throw badInput('from must not be after to', 'from');
    if (Object.keys(createdAt).length) where.createdAt = createdAt;
    const limit = filter.limit ?? 50;
    if (!Number.isInteger(limit) || limit < 1 || limit > 200) throw badInput('limit must be an integer from 1 to 200', 'limit');
    return this.em.find(ProviderFile, where, { orderBy: { createdAt: 'desc', contentId: 'asc' }, limit });
  }

  async get(contentId: string): Promise<ProviderFile> {
    if (typeof contentId !== 'string' || !contentId.trim()) throw badInput('contentId is required', 'contentId');
    const file = await this.em.findOne(ProviderFile, { contentId });
    if (!file) throw notFound('File', contentId);
    return file;
  }

  /** The stored bytes of a file (loaded only when asked for). */
  async content(file: ProviderFile): Promise<Buffer> {
    const row = await this.em.findOne(ProviderFile, { contentId: file.contentId }, { populate: ['data'] as never });
    return Buffer.from(row?.data as Uint8Array);
  }
}
