"""The LAN server's TLS certificate: self-signed, made on this machine at the first `serve --lan`,
kept beside the database and reused (so a phone's browser warns once, not at every start).

Browsers open the camera only on a secure page, and a phone reaches the scorepad by this
machine's LAN address, which no public authority certifies: a certificate of its own is the
one way. It is made again only when it has expired or does not name an address served.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

CERT_NAME = "tls-cert.pem"
KEY_NAME = "tls-key.pem"
VALID_DAYS = 825  # the longest validity browsers have accepted for a server certificate
RENEW_BEFORE = datetime.timedelta(days=7)


@dataclass(frozen=True, slots=True)
class TlsFiles:
    """A certificate and its private key, as PEM files."""

    cert: Path
    key: Path


def ensure_certificate(folder: Path, names: Sequence[str]) -> TlsFiles:
    """The certificate in `folder` if it names every one of `names` (addresses or host names)
    and is valid for a week yet; else a new one for them, written there (the key owner-only)."""
    files = TlsFiles(folder / CERT_NAME, folder / KEY_NAME)
    if files.cert.exists() and files.key.exists() and _still_good(files.cert, names):
        return files
    folder.mkdir(parents=True, exist_ok=True)
    cert_pem, key_pem = make_certificate(names)
    _write_private(files.key, key_pem)
    files.cert.write_bytes(cert_pem)
    return files


def make_certificate(names: Sequence[str], days: int = VALID_DAYS) -> tuple[bytes, bytes]:
    """A self-signed certificate (PEM) for `names` and its EC P-256 private key (PEM)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"Phase 10 Dice scorepad on {socket.gethostname()[:40]}")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))  # a phone's clock a little behind
        .not_valid_after(now + datetime.timedelta(days=days))
        .add_extension(x509.SubjectAlternativeName([_general_name(n) for n in dict.fromkeys(names)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    return cert.public_bytes(serialization.Encoding.PEM), key_pem


def certificate_names(path: Path) -> set[str]:
    """The addresses and host names a PEM certificate is for."""
    from cryptography import x509

    cert = x509.load_pem_x509_certificate(path.read_bytes())
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return {str(n) for n in san.get_values_for_type(x509.IPAddress)} | set(san.get_values_for_type(x509.DNSName))


def _still_good(path: Path, names: Sequence[str]) -> bool:
    from cryptography import x509

    try:
        cert = x509.load_pem_x509_certificate(path.read_bytes())
        covered = certificate_names(path)
    except (ValueError, x509.ExtensionNotFound):  # damaged or not ours: make a new one
        return False
    fresh = cert.not_valid_after_utc - RENEW_BEFORE > datetime.datetime.now(datetime.timezone.utc)
    return fresh and {_canonical(n) for n in names} <= covered


def _general_name(name: str):
    from cryptography import x509

    try:
        return x509.IPAddress(ipaddress.ip_address(name))
    except ValueError:
        return x509.DNSName(name)


def _canonical(name: str) -> str:
    try:
        return str(ipaddress.ip_address(name))
    except ValueError:
        return name


def _write_private(path: Path, data: bytes) -> None:
    """Write a file only its owner may read, created so from the start (no moment world-readable)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    os.chmod(path, 0o600)  # an older file keeps its old mode through O_TRUNC
