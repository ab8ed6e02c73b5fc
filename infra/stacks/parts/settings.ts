import { CfnParameter, Fn } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import packageJson from '../../../package.json' with { type: 'json' };
import type { ServiceFunction } from '../../constructs/service-function';
import type { StackScope } from './context';

/**
 * The stack's parameters every function reads (log level, debug sampling, the platform admin
 * token's hash, the transcript sender) and the environment they make, with the service's options.
 */
export class FunctionSettings {
  readonly environment: Readonly<Record<string, string>>;
  /** Names the transcript sender and lets the function send from it (its address or domain) through SES. */
  readonly withEmail: (fn: ServiceFunction) => void;

  constructor(stack: StackScope, props: { rateLimitPerMinute?: number; authCacheTtlMs?: number }) {
    const adminTokenHash = new CfnParameter(stack, 'PlatformAdminTokenSha256', {
      type: 'String',
      noEcho: true,
      allowedPattern: '^[0-9a-fA-F]{64}$',
      description: 'SHA-256 (hex) of the platform admin token',
    });

    const logLevel = new CfnParameter(stack, 'LogLevel', {
      type: 'String',
      default: 'INFO',
      allowedValues: ['DEBUG', 'INFO', 'WARN', 'ERROR'],
      description: 'Log level of every function (INFO writes one access line per request)',
    });
    const debugLogSampleRate = new CfnParameter(stack, 'DebugLogSampleRate', {
      type: 'Number',
      default: 0,
      minValue: 0,
      maxValue: 1,
      description: 'Share of requests (0-1) logged at DEBUG whatever LogLevel says, drawn per request',
    });
    const transcriptSender = new CfnParameter(stack, 'TranscriptSenderAddress', {
      type: 'String',
      default: 'no-reply@example.com',
      allowedPattern: '^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$',
      description:
        'From address of transcript e-mails: an address, or an address of a domain, verified in SES in this region',
    });
    const withEmail = (fn: ServiceFunction) => {
      fn.addEnvironment('TRANSCRIPT_EMAIL_FROM', transcriptSender.valueAsString);
      // The identity SES authorizes against is the verified address or its domain: both, nothing else.
      const identity = (name: string) =>
        `arn:${stack.partition}:ses:${stack.region}:${stack.account}:identity/${name}`;
      fn.addToRolePolicy(
        new PolicyStatement({
          actions: ['ses:SendEmail'],
          resources: [
            identity(transcriptSender.valueAsString),
            identity(Fn.select(1, Fn.split('@', transcriptSender.valueAsString))),
          ],
        }),
      );
    };

    const environment: Record<string, string> = {
      SERVICE_VERSION: packageJson.version,
      POWERTOOLS_LOG_LEVEL: logLevel.valueAsString,
      POWERTOOLS_LOGGER_SAMPLE_RATE: debugLogSampleRate.valueAsString,
      PLATFORM_ADMIN_TOKEN_SHA256: adminTokenHash.valueAsString,
      ...(props.rateLimitPerMinute && { RATE_LIMIT_PER_MINUTE: String(props.rateLimitPerMinute) }),
      ...(props.authCacheTtlMs && { AUTH_CACHE_TTL_MS: String(props.authCacheTtlMs) }),
    };

    this.environment = environment;
    this.withEmail = withEmail;
  }
}
