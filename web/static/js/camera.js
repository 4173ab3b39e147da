// The live camera: offered only where the browser can open it (a secure page: HTTPS or this
// computer itself; a phone on the LAN over plain HTTP has no camera API), and its failures
// told as sentences a player can act on.

const INSTEAD = "Use “Take photo” instead.";

export function cameraUsable() {
  return !!(window.isSecureContext && navigator.mediaDevices && typeof navigator.mediaDevices.getUserMedia === "function");
}

// `err`: what getUserMedia threw, or null when the browser has no camera API here.
export function cameraMessage(err) {
  if (!err) return `This browser offers no live camera on this page (it needs a secure connection). ${INSTEAD}`;
  switch (err.name) {
    case "NotAllowedError":
    case "SecurityError":
      return `The camera was not allowed for this page. ${INSTEAD}`;
    case "NotFoundError":
    case "OverconstrainedError":
      return `No camera was found on this device. ${INSTEAD}`;
    case "NotReadableError":
    case "AbortError":
      return `The camera is in use by another app. ${INSTEAD}`;
    default:
      return `The camera cannot be opened here. ${INSTEAD}`;
  }
}
