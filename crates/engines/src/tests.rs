use super::*;

#[test]
fn every_known_engine_has_its_own_profile_and_auto_has_none() {
    assert!(profile(Engine::Auto).is_none());
    for e in Engine::KNOWN {
        let p = profile(e).expect("profile");
        assert_eq!(p.engine, e, "{e}");
        assert!(!p.checked.is_empty() && !p.name.is_empty());
        assert_eq!(e.as_str().parse::<Engine>(), Ok(e));
        for v in p.version {
            assert!(v.path.starts_with('/') && v.pointer.starts_with('/'), "{e}");
        }
        if let Some(t) = p.tokenize {
            assert!(t.path.starts_with('/'), "{e}");
        }
    }
    assert!("auto".parse::<Engine>() == Ok(Engine::Auto));
    let err = "sglan".parse::<Engine>().unwrap_err();
    assert!(err.contains("sglang"), "{err}");
}

#[test]
fn refused_fields_are_the_ones_that_fail_a_request() {
    assert_eq!(
        profile(Engine::Transformers).map(|p| p.refused_fields()),
        Some(vec![("ignore_eos", 422), ("min_tokens", 422)])
    );
    assert!(GENERIC.refused_fields().is_empty());
    assert!(!profile(Engine::Transformers).is_some_and(|p| p.can_tokenize()));
    assert!(profile(Engine::Sglang).is_some_and(|p| p.reads_server_args()));
    assert!(!profile(Engine::Llamacpp).is_some_and(|p| p.reads_server_args()));
}
