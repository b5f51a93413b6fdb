import { gql } from '@apollo/client';

/** A driver's profile screen: the documents this small app is built with, as an app writes them. */
export const DRIVER = gql`
  query Driver($userId: ID!) {
    user(userId: $userId) { id userId homeZip }
  }
`;

export const CREATE_DRIVER = gql`
  mutation CreateDriver($input: CreateUserInput) {
    createUser(input: $input) { id userId homeZip }
  }
`;
