// The New cluster dialog's form as a scenario file (docs/scenarios.md).

/**
 * newClusterScenario builds the scenario the dialog describes, or names the problem.
 * @param {any} f the form's elements (brokers, topic, partitions, rf, era, minisr, seed)
 * @returns {{scenario?: object, problem?: string}}
 */
export function newClusterScenario(f) {
  const brokers = Number(f.brokers.value), rf = Number(f.rf.value), partitions = Number(f.partitions.value);
  if (rf > brokers) return { problem: `Replication factor ${rf} is more than the ${brokers} brokers.` };
  const names = [...new Set(f.topic.value.split(",").map((x) => x.trim()).filter(Boolean))];
  if (!names.length) return { problem: "Name at least one topic." };
  return { scenario: {
    name: `${brokers} brokers, ${names.length > 1 ? names.length + " topics × " : ""}${partitions} partition${partitions === 1 ? "" : "s"}, RF ${rf}`,
    description: `A new cluster: topic${names.length > 1 ? "s" : ""} ${names.join(", ")}, protocol era ${f.era.value}. Use the controls to act on it.`,
    seed: Number(f.seed.value),
    brokers,
    topics: names.map((name) => ({ name, partitions, replicationFactor: rf })),
    config: { "inter.broker.protocol.version": f.era.value, "min.insync.replicas": Number(f.minisr.value) },
  } };
}
