/**
 * The Kubernetes protobuf body of a SelfSubjectAccessReview, which kubectl's typed client sends (`kubectl auth can-i`:
 * Content-Type application/vnd.kubernetes.protobuf), read as a kube-apiserver reads it: the envelope
 * (k8s.io/apimachinery pkg/runtime/serializer/protobuf: the magic "k8s\0", then a runtime.Unknown — typeMeta 1
 * {apiVersion 1, kind 2}, raw 2), the object inside (k8s.io/api authorization/v1 generated.proto:
 * SelfSubjectAccessReview spec 2 → resourceAttributes 1 {namespace 1, verb 2, group 3, version 4, resource 5,
 * subresource 6, name 7}, nonResourceAttributes 2 {path 1, verb 2}). Only length-delimited and varint fields occur.
 */
export const KUBERNETES_PROTOBUF = 'application/vnd.kubernetes.protobuf';
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** Each field of one message: number → its length-delimited values (varints are skipped: none is read here). */
function fields(buf: Buffer): Map<number, Buffer[]> {
  const out = new Map<number, Buffer[]>();
  let i = 0;
  const varint = (): number => {
    let v = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (i >= buf.length) throw new Error('truncated varint');
      const b = buf[i++]!;
      v += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return v;
    }
    throw new Error('varint too long');
  };
  while (i < buf.length) {
    const key = varint();
    const wire = key & 7;
    const num = Math.floor(key / 8);
    if (wire === 0) varint();
    else if (wire === 2) {
      const len = varint();
      if (i + len > buf.length) throw new Error('truncated field');
      (out.get(num) ?? out.set(num, []).get(num)!).push(buf.subarray(i, i + len));
      i += len;
    } else throw new Error(`wire type ${wire} is not used by these messages`);
  }
  return out;
}

const str = (f: Map<number, Buffer[]>, n: number): string | undefined => f.get(n)?.[0]?.toString('utf8');
const sub = (f: Map<number, Buffer[]>, n: number): Map<number, Buffer[]> | undefined => {
  const b = f.get(n)?.[0];
  return b ? fields(b) : undefined;
};

/** The review as the JSON form would carry it; throws on a body that is not one. */
export function decodeSelfSubjectAccessReview(body: Buffer): { apiVersion?: string; kind?: string; spec?: Record<string, unknown> } {
  if (!body.subarray(0, 4).equals(MAGIC)) throw new Error('no k8s protobuf magic');
  const unknown = fields(body.subarray(4));
  const typeMeta = sub(unknown, 1);
  const raw = unknown.get(2)?.[0];
  if (!raw) throw new Error('no raw object');
  const review = fields(raw);
  const spec = sub(review, 2);
  const ra = spec && sub(spec, 1);
  const nra = spec && sub(spec, 2);
  const pick = (m: Map<number, Buffer[]>, names: readonly string[]) =>
    Object.fromEntries(names.map((name, i) => [name, str(m, i + 1)]).filter(([, v]) => v !== undefined && v !== ''));
  return {
    apiVersion: typeMeta && str(typeMeta, 1),
    kind: typeMeta && str(typeMeta, 2),
    spec: {
      ...(ra ? { resourceAttributes: pick(ra, ['namespace', 'verb', 'group', 'version', 'resource', 'subresource', 'name']) } : {}),
      ...(nra ? { nonResourceAttributes: pick(nra, ['path', 'verb']) } : {}),
    },
  };
}
