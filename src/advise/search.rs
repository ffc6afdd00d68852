//! Which sets of changes to judge, in which order: every set of one change,
//! then of two, then of three, each size in a fixed order, never two changes
//! to one key, never a set that holds one already found to hold (a fix stays
//! minimal: each of its changes is load-bearing on the same seeds).

/// The sets of `size` changes out of `usable` (indices into the model's
/// repairs), in the order advise judges them: those whose changes were each
/// seen to change the runs alone come first, then the others, each group in
/// lexicographic order. `conflicts(a, b)` says two changes write one key.
pub fn sets_of(
    size: usize,
    usable: &[usize],
    seen: &[bool],
    conflicts: &dyn Fn(usize, usize) -> bool,
) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut current = Vec::with_capacity(size);
    combine(usable, size, 0, &mut current, &mut out, conflicts);
    // A stable sort keeps the lexicographic order within each group.
    out.sort_by_key(|set: &Vec<usize>| set.iter().filter(|&&i| !seen[i]).count());
    out
}

fn combine(
    usable: &[usize],
    size: usize,
    from: usize,
    current: &mut Vec<usize>,
    out: &mut Vec<Vec<usize>>,
    conflicts: &dyn Fn(usize, usize) -> bool,
) {
    if current.len() == size {
        out.push(current.clone());
        return;
    }
    for k in from..usable.len() {
        let i = usable[k];
        if current.iter().any(|&j| conflicts(i, j)) {
            continue;
        }
        current.push(i);
        combine(usable, size, k + 1, current, out, conflicts);
        current.pop();
    }
}

/// Whether `set` makes every setting `fix` makes: then it is not minimal.
/// Compared by settings, not by changes, since two changes may share one
/// (`bank.status_query=true` alone, and as the condition of another).
pub fn contains<T: PartialEq>(set: &[T], fix: &[T]) -> bool {
    fix.iter().all(|i| set.contains(i))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_never_change_one_key_twice_and_seen_changes_come_first() {
        // 0 and 1 write one key; 2 was not seen to change anything alone.
        let conflicts = |a: usize, b: usize| (a.min(b), a.max(b)) == (0, 1);
        let seen = [true, true, false, true];
        let pairs = sets_of(2, &[0, 1, 2, 3], &seen, &conflicts);
        assert_eq!(
            pairs,
            [vec![0, 3], vec![1, 3], vec![0, 2], vec![1, 2], vec![2, 3]]
        );
        assert_eq!(sets_of(3, &[0, 1, 2, 3], &seen, &conflicts).len(), 2);
    }

    #[test]
    fn a_superset_of_a_fix_is_not_minimal() {
        assert!(contains(&[1, 4, 7], &[4]));
        assert!(contains(&[1, 4, 7], &[1, 7]));
        assert!(!contains(&[1, 4], &[4, 7]));
    }
}
