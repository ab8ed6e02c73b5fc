import { publishEmailSent } from './metrics';
import { traced } from './tracing';

/**
 * Outgoing e-mail through SES v2, one client per container, loaded on first use. Locally the SES
 * emulator (aws-ses-v2-local) keeps what is sent: `GET <its endpoint>/store`.
 */
let loaded:
  | Promise<{
      client: import('@aws-sdk/client-sesv2').SESv2Client;
      ses: typeof import('@aws-sdk/client-sesv2');
    }>
  | undefined;
const sdk = () => {
  loaded ??= import('@aws-sdk/client-sesv2').then((ses) => ({
    ses,
    client: traced(new ses.SESv2Client({})),
  }));
  return loaded;
};

export interface OutgoingMail {
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
}

export const mail = {
  /** Sends one message with a text and an HTML part; returns SES's message id. */
  async send(message: OutgoingMail): Promise<string> {
    const { client, ses } = await sdk();
    const sent = await client.send(
      new ses.SendEmailCommand({
        FromEmailAddress: message.from,
        Destination: { ToAddresses: [message.to] },
        Content: {
          Simple: {
            Subject: { Data: message.subject, Charset: 'UTF-8' },
            Body: {
              Text: { Data: message.text, Charset: 'UTF-8' },
              Html: { Data: message.html, Charset: 'UTF-8' },
            },
          },
        },
      }),
    );
    publishEmailSent();
    return sent.MessageId ?? '';
  },
};
