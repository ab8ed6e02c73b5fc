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
    client: traced(new s3.S3Client({ forcePathStyle: Boolean(process.env.AWS_ENDPOINT_URL_S3) })),
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

  /** A URL that fetches the object without a credential until it expires. */
  async downloadUrl(bucket: BucketName, key: string, expiresInSeconds: number): Promise<string> {
    const { client, s3, presigner } = await sdk();
    return presigner.getSignedUrl(client, new s3.GetObjectCommand({ Bucket: bucketOf(bucket), Key: key }), {
      expiresIn: expiresInSeconds,
    });
  },
};
