/*===- signature.h - The detached signature of an .encm artifact ---------===*
 *
 * `encc sign` writes ARTIFACT.sig; libencrt checks it when the loader is
 * given a trusted public key (encrt_model_options.trusted_public_key). The
 * file is ENCM_SIGNATURE_SIZE bytes:
 *
 *   [0, 8)    ENCM_SIGNATURE_MAGIC
 *   [8, 40)   the signer's Ed25519 public key
 *   [40, 104) the Ed25519 signature of the message
 *             ENCM_SIGNATURE_CONTEXT (with its NUL, 18 bytes) || SHA-256(artifact)
 *
 * SHA-256 covers every byte of the artifact file (what `sha256sum` prints);
 * keys are written as 64 hex digits (public) and 128 hex digits (secret:
 * libsodium's seed || public key).
 *
 * Plain C, no dependencies: shared by the compiler and the runtime.
 *===----------------------------------------------------------------------===*/
#ifndef ENCRT_SIGNATURE_H
#define ENCRT_SIGNATURE_H

#define ENCM_SIGNATURE_MAGIC "ENCMSIG1"
#define ENCM_SIGNATURE_CONTEXT "encm-signature-v1"
#define ENCM_SIGNATURE_CONTEXT_SIZE 18 /* with the NUL */
#define ENCM_PUBLIC_KEY_SIZE 32
#define ENCM_SECRET_KEY_SIZE 64
#define ENCM_SIGNATURE_BYTES 64
#define ENCM_SHA256_SIZE 32
#define ENCM_SIGNATURE_SIZE (8 + ENCM_PUBLIC_KEY_SIZE + ENCM_SIGNATURE_BYTES)

#endif /* ENCRT_SIGNATURE_H */
