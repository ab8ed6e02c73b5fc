/**
 * `npx tsx bench/upload-complete-main.ts`: the time to complete a 25 MB upload and the peak
 * RSS of `complete` over it (its check reads the head and first bytes, and streams the object
 * through SHA-256: memory must not hold the file). The stack and its emulators run here; the
 * handler runs in a child process of its own (upload-complete-probe.ts), so its RSS is its alone.
 */
import { spawn } from 'node:child_process';
import { startLocalStack } from '../infra/local/stack';
import { projectRoot } from './options';
import { RESULT_MARKER, type UploadCompleteResult } from './protocol';

// The contract's default UPLOAD_MAX_BYTES; UPLOAD_BENCH_BYTES checks that memory does not grow with size.
const SIZE = Number(process.env.UPLOAD_BENCH_BYTES ?? 26_214_400);

const stack = await startLocalStack({ port: 0, seedDemo: true, runWorkers: false });
try {
  const demo = stack.demo;
  if (!demo) throw new Error('no demo organization');
  const bytes = Buffer.alloc(SIZE, 7);
  Buffer.from('%PDF-1.7\n').copy(bytes);
  const created = (await (
    await fetch(`${stack.baseUrl}/api/uploads`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${demo.apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ filename: 'big.pdf', contentType: 'application/pdf', size: SIZE }),
    })
  ).json()) as { id: string; uploadUrl: string };
  // The emulator (fauxqs) refuses bodies over 11 MiB, so one presigned PUT of 25 MB cannot reach
  // it: the bytes go under the same key by multipart upload (5 MiB parts), as S3 would hold them.
  const { S3Client } = await import('@aws-sdk/client-s3');
  const { Upload } = await import('@aws-sdk/lib-storage');
  const key = new URL(created.uploadUrl).pathname.split('/').slice(2).join('/');
  const client = new S3Client({ forcePathStyle: true });
  await new Upload({
    client,
    params: { Bucket: process.env.UPLOAD_BUCKET_NAME, Key: key, Body: bytes, ContentType: 'application/pdf' },
  }).done();
  client.destroy();
  const result = await new Promise<UploadCompleteResult>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        '--expose-gc',
        '--no-warnings',
        '--import',
        'tsx',
        'bench/upload-complete-probe.ts',
        created.id,
        demo.apiKey,
      ],
      { cwd: projectRoot, env: process.env, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', () => {
      const line = out.split('\n').find((entry) => entry.startsWith(RESULT_MARKER));
      if (line)
        resolve({ ...(JSON.parse(line.slice(RESULT_MARKER.length)) as UploadCompleteResult), bytes: SIZE });
      else reject(new Error(`probe gave no result: ${out}`));
    });
  });
  console.log(`${RESULT_MARKER}${JSON.stringify(result)}`);
} finally {
  await stack.stop();
}
