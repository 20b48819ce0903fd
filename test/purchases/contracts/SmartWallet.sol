// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/** A minimal smart wallet for tests: EIP-1271 accepts a hash signed by its owner. */
contract SmartWallet {
    address public owner;

    constructor(address initialOwner) {
        owner = initialOwner;
    }

    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        if (signature.length != 65) return 0xffffffff;
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        return ecrecover(hash, v, r, s) == owner ? bytes4(0x1626ba7e) : bytes4(0xffffffff);
    }
}
