export default function Memories() {
  return null;
}
