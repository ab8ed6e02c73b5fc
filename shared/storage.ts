import type { Readable } from 'node:stream';
import { bucketDefinitions } from './resources';
import { traced } from './tracing';

type BucketName = (typeof bucketDefinitions)[number]['name'];

/**
 * One S3 client per container, loaded on first use (only the export functions touch S3). With an
 * endpoint override (the local emulator) addresses are path-style: `<endpoint>/<bucket>/<key>`.
 */
let loaded:
  | Promise<{
      client: import('@aws-sdk/client-s3').S3Client;
      s3: typeof import('@aws-sdk/client-s3');
      storage: typeof import('@aws-sdk/lib-storage');
      presigner: typeof import('@aws-sdk/s3-request-presigner');
    }>
  | undefined;
const sdk = () => {
  loaded ??= Promise.all([
    import('@aws-sdk/client-s3'),
    import('@aws-sdk/lib-storage'),
    import('@aws-sdk/s3-request-presigner'),
  ]).then(([s3, storage, presigner]) => ({
    s3,
    storage,
    presigner,
    // Checksums only where S3 requires one: otherwise the SDK signs a CRC32 of the empty body into
    // presigned PUT URLs, and S3 refuses the client's real bytes as a checksum mismatch.
    client: traced(
      new s3.S3Client({
        forcePathStyle: Boolean(process.env.AWS_ENDPOINT_URL_S3),
        requestChecksumCalculation: 'WHEN_REQUIRED',
      }),
    ),
  }));
  return loaded;
};

function bucketOf(bucket: BucketName): string {
  const definition = bucketDefinitions.find((candidate) => candidate.name === bucket);
  const name = definition ? process.env[definition.envVar] : undefined;
  if (!name) throw new Error(`Bucket ${bucket} is not configured (${definition?.envVar ?? 'unknown'})`);
  return name;
}

export const storage = {
  /**
   * Uploads a stream as it is produced (multipart, 5 MiB parts, two in flight): memory holds a few
   * parts, whatever the file's size.
   */
  async putStream(
    bucket: BucketName,
    key: string,
    body: Readable,
    options: { contentType: string; contentDisposition?: string },
  ): Promise<number> {
    const { client, storage: lib } = await sdk();
    let bytes = 0;
    body.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    await new lib.Upload({
      client,
      params: {
        Bucket: bucketOf(bucket),
        Key: key,
        Body: body,
        ContentType: options.contentType,
        ...(options.contentDisposition ? { ContentDisposition: options.contentDisposition } : {}),
      },
      queueSize: 2,
      partSize: 5 * 1024 * 1024,
    }).done();
    return bytes;
  },

  /**
   * A URL that fetches the object without a credential until it expires; `as` makes S3 answer it
   * as a download (`Content-Disposition: attachment`) of the given type, whatever is stored.
   */
  async downloadUrl(
    bucket: BucketName,
    key: string,
    expiresInSeconds: number,
    as?: { filename: string; contentType: string },
  ): Promise<string> {
    const { client, s3, presigner } = await sdk();
    return presigner.getSignedUrl(
      client,
      new s3.GetObjectCommand({
        Bucket: bucketOf(bucket),
        Key: key,
        ...(as && {
          ResponseContentDisposition: attachmentDisposition(as.filename),
          ResponseContentType: as.contentType,
        }),
      }),
      { expiresIn: expiresInSeconds },
    );
  },

  /**
   * A URL that stores exactly `size` bytes of `contentType` under the key until it expires: both are
   * signed, so S3 refuses a PUT of another length or type (SignatureDoesNotMatch).
   */
  async uploadUrl(
    bucket: BucketName,
    key: string,
    expiresInSeconds: number,
    object: { contentType: string; size: number },
  ): Promise<string> {
    const { client, s3, presigner } = await sdk();
    return presigner.getSignedUrl(
      client,
      new s3.PutObjectCommand({
        Bucket: bucketOf(bucket),
        Key: key,
        ContentType: object.contentType,
        ContentLength: object.size,
      }),
      { expiresIn: expiresInSeconds, signableHeaders: new Set(['content-type', 'content-length']) },
    );
  },

  /** The stored object's size and type, or undefined when there is none. */
  async head(bucket: BucketName, key: string): Promise<{ size: number; contentType: string } | undefined> {
    const { client, s3 } = await sdk();
    try {
      const head = await client.send(new s3.HeadObjectCommand({ Bucket: bucketOf(bucket), Key: key }));
      return { size: head.ContentLength ?? 0, contentType: head.ContentType ?? '' };
    } catch (error) {
      if (error instanceof s3.NotFound || (error as { name?: string }).name === 'NotFound') return undefined;
      throw error;
    }
  },

  /** The object's first bytes (one ranged GET), at most `bytes` of them. */
  async readStart(bucket: BucketName, key: string, bytes: number): Promise<Uint8Array> {
    const { client, s3 } = await sdk();
    const { Body } = await client.send(
      new s3.GetObjectCommand({ Bucket: bucketOf(bucket), Key: key, Range: `bytes=0-${bytes - 1}` }),
    );
    return Body ? Body.transformToByteArray() : new Uint8Array();
  },

  /** Reads the object as a stream, chunk by chunk (memory holds a chunk, whatever the size). */
  async read(bucket: BucketName, key: string): Promise<AsyncIterable<Uint8Array>> {
    const { client, s3 } = await sdk();
    const { Body } = await client.send(new s3.GetObjectCommand({ Bucket: bucketOf(bucket), Key: key }));
    return (Body as AsyncIterable<Uint8Array> | undefined) ?? (async function* () {})();
  },

  /**
   * A copy inside the bucket, made by S3 (no byte passes through the function). With `as`, the copy
   * is stored as a download of that type (`Content-Disposition: attachment`), so a GET answers so
   * even where the signed URL's override is not honoured (the local emulator).
   */
  async copy(
    bucket: BucketName,
    from: string,
    to: string,
    as?: { filename: string; contentType: string },
  ): Promise<void> {
    const { client, s3 } = await sdk();
    const name = bucketOf(bucket);
    await client.send(
      new s3.CopyObjectCommand({
        Bucket: name,
        Key: to,
        CopySource: `${name}/${encodeURIComponent(from)}`,
        ...(as && {
          MetadataDirective: 'REPLACE' as const,
          ContentType: as.contentType,
          ContentDisposition: attachmentDisposition(as.filename),
        }),
      }),
    );
  },

  /** Deletes the object; deleting a missing one is a no-op, as in S3. */
  async remove(bucket: BucketName, key: string): Promise<void> {
    const { client, s3 } = await sdk();
    await client.send(new s3.DeleteObjectCommand({ Bucket: bucketOf(bucket), Key: key }));
  },
};

/**
 * `attachment; filename="…"; filename*=UTF-8''…`: the quoted form keeps ASCII only (quotes and
 * backslashes out), RFC 5987's form carries the real name.
 */
export function attachmentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}
