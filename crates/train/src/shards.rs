//! Shards of a table for job arrays: shard `k` of `n` is every `n`-th row from row `k`
//! (`cargo xtask featurize --shard K/N`, one task of a cluster job array each).

/// `K/N` with 0 <= K < N, as `--shard` takes it.
///
/// # Errors
/// The text, with what is wrong.
pub fn parse_shard(text: &str) -> Result<(usize, usize), String> {
    let (k, n) = text
        .split_once('/')
        .ok_or_else(|| format!("{text:?}: expected K/N, e.g. 0/4"))?;
    let k: usize = k
        .trim()
        .parse()
        .map_err(|_| format!("{text:?}: K is not a number"))?;
    let n: usize = n
        .trim()
        .parse()
        .map_err(|_| format!("{text:?}: N is not a number"))?;
    if n == 0 || k >= n {
        return Err(format!("{text:?}: K must be 0..N-1 and N at least 1"));
    }
    Ok((k, n))
}

/// The rows of shard `k` of `n` of a table of `len` rows (every row without a shard).
pub fn shard_rows(len: usize, shard: Option<(usize, usize)>) -> Vec<usize> {
    let (k, n) = shard.unwrap_or((0, 1));
    (0..len).filter(|row| row % n == k).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_rows() {
        assert_eq!(parse_shard("1/4"), Ok((1, 4)));
        assert!(
            parse_shard("4/4").is_err() && parse_shard("1").is_err() && parse_shard("0/0").is_err()
        );
        let mut seen: Vec<usize> = (0..3).flat_map(|k| shard_rows(10, Some((k, 3)))).collect();
        seen.sort();
        assert_eq!(seen, (0..10).collect::<Vec<_>>());
        assert_eq!(shard_rows(10, Some((1, 3))), vec![1, 4, 7]);
        assert_eq!(shard_rows(10, None).len(), 10);
    }
}
