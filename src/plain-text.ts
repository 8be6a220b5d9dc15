// Text from a repository or a pull request (an error it throws, a key of its YAML, a name it
// chose) shown to people outside GitHub's Markdown: a status condition or an Event that
// `kubectl describe` prints, a commit status GitHub lists, a terminal running `synth`. Control
// characters there clear a screen, fake lines or write the clipboard (OSC 52); bidirectional
// controls make a line read otherwise than it is written. They are dropped; tab and newline stay.

/** C0 controls but tab and newline, DEL, C1 controls, and the bidirectional embedding/override/isolate controls. */
// eslint-disable-next-line no-control-regex
export const invisibleControls = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** `text` without invisible controls. */
export function plainText(text: string): string {
  return text.replace(invisibleControls, '');
}

/** `text` without invisible controls, cut to `maxLength` (ending in `...`) where it is longer: an API field's bound. */
export function plainTextWithin(text: string, maxLength: number): string {
  const plain = plainText(text);
  return plain.length > maxLength ? `${plain.slice(0, maxLength - 3)}...` : plain;
}
